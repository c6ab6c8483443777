import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * Every failure the service knows about. The one table below maps each to the API's error code,
 * its HTTP status and a gRPC status (spec/DECISIONS.md section 2).
 */
export type ErrorKind =
  | 'INTERNAL'
  | 'UNKNOWN_FUNCTION'
  | 'INVALID_PARAMETER'
  | 'MISSING_PARAMETER'
  | 'NOT_FOUND'
  | 'INVALID_STATE'
  | 'LIMIT_EXCEEDED'
  | 'UNAUTHENTICATED'
  | 'RATE_LIMITED'
  | 'MALFORMED_BODY'
  | 'BODY_TOO_LARGE'
  | 'CONFLICT'
  | 'UNAVAILABLE';

interface Mapping {
  code: number;
  http: number;
  grpc: GrpcStatus;
}

export const ERROR_TABLE: Record<ErrorKind, Mapping> = {
  INTERNAL: { code: 1, http: 500, grpc: GrpcStatus.INTERNAL },
  UNKNOWN_FUNCTION: { code: 2, http: 404, grpc: GrpcStatus.UNIMPLEMENTED },
  INVALID_PARAMETER: { code: 3, http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  MISSING_PARAMETER: { code: 4, http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  NOT_FOUND: { code: 5, http: 404, grpc: GrpcStatus.NOT_FOUND },
  INVALID_STATE: { code: 6, http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  LIMIT_EXCEEDED: { code: 7, http: 400, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  UNAUTHENTICATED: { code: 11, http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  RATE_LIMITED: { code: 12, http: 503, grpc: GrpcStatus.UNAVAILABLE },
  MALFORMED_BODY: { code: 13, http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  BODY_TOO_LARGE: { code: 13, http: 413, grpc: GrpcStatus.INVALID_ARGUMENT },
  // An optimistic-concurrency conflict that survived its retries: the client may simply retry.
  CONFLICT: { code: 1, http: 500, grpc: GrpcStatus.ABORTED },
  // A dependency (event store, bus, a read model catching up) is down for now: retry later.
  UNAVAILABLE: { code: 1, http: 503, grpc: GrpcStatus.UNAVAILABLE },
};

/** The one error type of the project: a kind from the table and a message a person can act on. */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'AppError';
  }
  get code() {
    return ERROR_TABLE[this.kind].code;
  }
  get httpStatus() {
    return ERROR_TABLE[this.kind].http;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
