/**
 * Every failure the service knows about. The one table below maps each to the API's error code
 * and its HTTP status; the gRPC status of each lives at the gRPC edge (shared/grpc/grpcStatus.ts),
 * so domain code that throws these imports no transport.
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
}

export const ERROR_TABLE: Record<ErrorKind, Mapping> = {
  INTERNAL: { code: 1, http: 500 },
  UNKNOWN_FUNCTION: { code: 2, http: 404 },
  INVALID_PARAMETER: { code: 3, http: 400 },
  MISSING_PARAMETER: { code: 4, http: 400 },
  NOT_FOUND: { code: 5, http: 404 },
  INVALID_STATE: { code: 6, http: 409 },
  LIMIT_EXCEEDED: { code: 7, http: 400 },
  UNAUTHENTICATED: { code: 11, http: 401 },
  RATE_LIMITED: { code: 12, http: 503 },
  MALFORMED_BODY: { code: 13, http: 400 },
  BODY_TOO_LARGE: { code: 13, http: 413 },
  // An optimistic-concurrency conflict that survived its retries: the client may simply retry.
  CONFLICT: { code: 1, http: 500 },
  // A store or service that is busy or unreachable right now: the client should retry shortly
  // (the gateway says when in Retry-After). Not RATE_LIMITED: the client did nothing wrong.
  UNAVAILABLE: { code: 1, http: 503 },
};

export const ERROR_KINDS = Object.keys(ERROR_TABLE) as ErrorKind[];

export const isErrorKind = (value: unknown): value is ErrorKind => typeof value === 'string' && Object.hasOwn(ERROR_TABLE, value);

/**
 * Where in a request an error is: a parameter and the positions leading to it, as in
 * `['data', 3, 'url']` (the url of a batch's fourth element) or `['id', 2]`.
 */
export type FieldPath = readonly (string | number)[];

/** A field path as clients read it: `data[3].url`, `id[2]`. The only place a path becomes text. */
export const fieldText = (field: FieldPath): string =>
  field.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');

/**
 * The one error type of the project: a kind from the table and a message a person can act on.
 * `field` says which parameter is wrong, as a path: a batch adds an element's position to it
 * (`within`) instead of rewriting the text, and the message names the path (`data[3].url: ...`).
 * `cause` keeps the underlying failure (a driver's error) for the log, never for the client.
 */
export class AppError extends Error {
  /** The parameter the error is about, or [] when it is about none. */
  readonly field: FieldPath;
  /** The message without its field path. */
  readonly detail: string;

  constructor(
    readonly kind: ErrorKind,
    detail: string,
    options?: { cause?: unknown; field?: FieldPath },
  ) {
    const field = options?.field ?? [];
    super(field.length ? `${fieldText(field)}: ${detail}` : detail, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'AppError';
    this.field = field;
    this.detail = detail;
  }
  get code() {
    return ERROR_TABLE[this.kind].code;
  }
  get httpStatus() {
    return ERROR_TABLE[this.kind].http;
  }
  /** The same error inside `prefix`: `within('data', 3)` turns `url: ...` into `data[3].url: ...`. */
  within(...prefix: FieldPath): AppError {
    return new AppError(this.kind, this.detail, { field: [...prefix, ...this.field], cause: this.cause });
  }
}

/** Runs `fn`; an AppError it throws is placed inside `prefix` (a batch's element: `['data', 3]`). */
export function inside<T>(prefix: FieldPath, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof AppError && prefix.length) throw error.within(...prefix);
    throw error;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
