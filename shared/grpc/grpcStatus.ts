import { status as GrpcStatus } from '@grpc/grpc-js';
import type { ErrorKind } from '../errors.ts';

/** The gRPC status each error kind crosses the wire with (the kind itself travels in metadata). */
export const GRPC_STATUS: Record<ErrorKind, GrpcStatus> = {
  INTERNAL: GrpcStatus.INTERNAL,
  UNKNOWN_FUNCTION: GrpcStatus.UNIMPLEMENTED,
  INVALID_PARAMETER: GrpcStatus.INVALID_ARGUMENT,
  MISSING_PARAMETER: GrpcStatus.INVALID_ARGUMENT,
  NOT_FOUND: GrpcStatus.NOT_FOUND,
  INVALID_STATE: GrpcStatus.FAILED_PRECONDITION,
  LIMIT_EXCEEDED: GrpcStatus.RESOURCE_EXHAUSTED,
  UNAUTHENTICATED: GrpcStatus.UNAUTHENTICATED,
  RATE_LIMITED: GrpcStatus.RESOURCE_EXHAUSTED,
  MALFORMED_BODY: GrpcStatus.INVALID_ARGUMENT,
  BODY_TOO_LARGE: GrpcStatus.INVALID_ARGUMENT,
  CONFLICT: GrpcStatus.ABORTED,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
};

/** Statuses a caller gets when the peer could not answer at all (down, unreachable, too slow). */
export const UNREACHABLE = new Set<GrpcStatus>([GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED]);
