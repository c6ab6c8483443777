import * as grpc from '@grpc/grpc-js';
import { fromBinary, toBinary, create, type DescMessage, type Message, type MessageShape, type MessageInitShape } from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { randomUUID } from 'node:crypto';
import { AppError, isAppError, isErrorKind, type FieldPath } from '../errors.ts';
import type { Logger } from '../log.ts';
import { callMetadata, channelCredentials, channelOptions, serverCredentials, tokenInterceptor, type GrpcCredentials } from './grpcAuth.ts';
import { GRPC_STATUS, UNREACHABLE } from './grpcStatus.ts';

/**
 * protoc-gen-es writes no grpc-js stubs: this bridge turns a generated service descriptor into a
 * grpc-js service definition, a server implementation and a promise-based client. Errors cross
 * the wire as a gRPC status plus the AppError kind and field path in metadata, so callers get the
 * same AppError.
 */
export type ServiceImpl<S extends GenServiceMethods> = {
  [K in keyof S]: (request: MessageShape<S[K]['input']>) => Promise<MessageInitShape<S[K]['output']>>;
};

export type ServiceClient<S extends GenServiceMethods> = {
  [K in keyof S]: (request: MessageInitShape<S[K]['input']>) => Promise<MessageShape<S[K]['output']>>;
} & { close(): void };

const KIND_HEADER = 'tock-error-kind';
/** The AppError's field path, as JSON; the status details then carry the message without it. */
const FIELD_HEADER = 'tock-error-field';

/** One method of a service as the bridge sees it: the descriptor fixes the message types at run time. */
type UntypedHandler = (request: Message) => Promise<MessageInitShape<DescMessage>>;
type UntypedCall = (
  request: Message,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, reply: Message) => void,
) => void;

function definitionOf<S extends GenServiceMethods>(service: GenService<S>): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<Message, Message>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: Message) => Buffer.from(toBinary(method.input, m)),
      requestDeserialize: (b: Buffer) => fromBinary(method.input, b),
      responseSerialize: (m: Message) => Buffer.from(toBinary(method.output, m)),
      responseDeserialize: (b: Buffer) => fromBinary(method.output, b),
    };
  }
  return definition;
}

/** Adds a service to a grpc-js server. Unknown errors are logged with an id and answered as INTERNAL without internals. */
export function addService<S extends GenServiceMethods>(server: grpc.Server, service: GenService<S>, impl: ServiceImpl<S>, log: Logger) {
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const fn = (impl as unknown as Record<string, UntypedHandler>)[method.localName];
    handlers[method.localName] = (call: grpc.ServerUnaryCall<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
      Promise.resolve()
        .then(() => fn!(call.request))
        .then(
          (reply) => callback(null, create(method.output, reply)),
          (error) => callback(toServiceError(error, `${service.typeName}/${method.name}`, log)),
        );
    };
  }
  server.addService(definitionOf(service), handlers);
}

/**
 * Error messages often quote the client's input. grpc-js sends the message percent-encoded in a
 * trailer and throws on a lone UTF-16 surrogate (JSON input like "\ud800"), which would leave the
 * call unanswered until the caller's deadline: such characters become U+FFFD first.
 */
const wellFormed = (text: string) => text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

function toServiceError(error: unknown, where: string, log: Logger): Partial<grpc.ServiceError> {
  const metadata = new grpc.Metadata();
  if (isAppError(error) && error.kind !== 'INTERNAL') {
    metadata.set(KIND_HEADER, error.kind);
    if (error.field.length) metadata.set(FIELD_HEADER, JSON.stringify(error.field));
    return { code: GRPC_STATUS[error.kind], details: wellFormed(error.detail), metadata };
  }
  const requestId = randomUUID();
  log.error('request failed', { where, requestId, error });
  metadata.set(KIND_HEADER, 'INTERNAL');
  return { code: grpc.status.INTERNAL, details: `internal error (request id ${requestId})`, metadata };
}

/**
 * A grpc-js server with message limits to match the clients' (large log pages, batch replies).
 * With a token in `credentials`, every call must carry it (checked before any handler runs).
 */
export const createGrpcServer = (credentials: GrpcCredentials) =>
  new grpc.Server({
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
    interceptors: credentials.token ? [tokenInterceptor(credentials.token)] : [],
  });

/** Starts a server on host:port (port 0 picks one), with TLS when `credentials` has it; resolves with the bound port. */
export async function startServer(server: grpc.Server, address: string, credentials: GrpcCredentials): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(address, serverCredentials(credentials), (error, port) => (error ? reject(error) : resolve(port))),
  );
}

export async function stopServer(server: grpc.Server, graceMs = 2000) {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A promise-based client; each call has a deadline so a dead peer becomes an error, not a hang. */
export function createClient<S extends GenServiceMethods>(
  service: GenService<S>,
  address: string,
  credentials: GrpcCredentials,
  options: { deadlineMs?: number } = {},
): ServiceClient<S> {
  const Ctor = grpc.makeGenericClientConstructor(definitionOf(service), service.typeName);
  const metadata = callMetadata(credentials);
  const client = new Ctor(address, channelCredentials(credentials), {
    ...channelOptions(credentials),
    'grpc.keepalive_time_ms': 30_000,
    // Replies such as 1000 log entries of 8 KiB each exceed grpc-js's 4 MiB default.
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
    'grpc.enable_retries': 1,
  });
  const deadlineMs = options.deadlineMs ?? 30_000;
  const calls = client as unknown as Record<string, UntypedCall>;
  const stub: Record<string, unknown> = { close: () => client.close() };
  for (const method of service.methods) {
    stub[method.localName] = (request: MessageInitShape<DescMessage>) =>
      new Promise<Message>((resolve, reject) => {
        const message = create(method.input, request);
        calls[method.localName]!(message, metadata.clone(), { deadline: Date.now() + deadlineMs }, (error, reply) =>
          error ? reject(fromServiceError(error)) : resolve(reply),
        );
      });
  }
  return stub as ServiceClient<S>;
}

function fromServiceError(error: grpc.ServiceError): AppError {
  const kind = error.metadata?.get(KIND_HEADER)[0];
  if (isErrorKind(kind)) return new AppError(kind, error.details, { cause: error, field: fieldOf(error.metadata.get(FIELD_HEADER)[0]) });
  // The peer refused our credential: an operator's problem, never the API client's (no 401 upstream).
  if (error.code === grpc.status.UNAUTHENTICATED) return new AppError('INTERNAL', `service call refused: ${error.details}`, { cause: error });
  // No kind: the peer never answered (down, unreachable, past the deadline). Worth a retry.
  if (UNREACHABLE.has(error.code)) return new AppError('UNAVAILABLE', `service unavailable: ${error.details}`, { cause: error });
  return new AppError('INTERNAL', error.details || error.message, { cause: error });
}

function fieldOf(header: unknown): FieldPath {
  if (typeof header !== 'string') return [];
  try {
    const field: unknown = JSON.parse(header);
    return Array.isArray(field) && field.every((p) => typeof p === 'string' || typeof p === 'number') ? field : [];
  } catch {
    return [];
  }
}
