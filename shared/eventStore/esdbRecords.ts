/**
 * Between @eventstore/db-client's types and ours: expected revisions, recorded events and errors.
 */
import {
  ANY,
  DeadlineExceededError,
  NO_STREAM,
  NotLeaderError,
  STREAM_EXISTS,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
  type AppendExpectedRevision,
  type CurrentRevision,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { AppError } from '../errors.ts';
import { WrongExpectedRevisionError, type ExpectedRevision, type RecordedEvent } from './eventStore.ts';

export const toEsdbExpected = (expected: ExpectedRevision): AppendExpectedRevision =>
  expected === 'any' ? ANY
  : expected === 'no_stream' ? NO_STREAM
  : expected === 'stream_exists' ? STREAM_EXISTS
  : BigInt(expected);

const fromEsdbRevision = (actual: CurrentRevision): number | 'no_stream' =>
  actual === NO_STREAM ? 'no_stream' : Number(actual);

/** Translates client failures into the project's error types; our own errors pass through. */
export function translate(error: unknown, stream?: string, expected?: ExpectedRevision): unknown {
  if (error instanceof WrongExpectedRevisionError || error instanceof AppError) return error;
  if (error instanceof WrongExpectedVersionError) {
    return new WrongExpectedRevisionError(
      stream ?? error.streamName,
      expected ?? 'any',
      fromEsdbRevision(error.actualVersion),
    );
  }
  // Some paths (the client's server-feature probe before an append) reject with the raw gRPC error.
  const grpcCode = (error as { code?: unknown } | null)?.code;
  const transient =
    error instanceof UnavailableError ||
    error instanceof DeadlineExceededError ||
    error instanceof TimeoutError ||
    error instanceof NotLeaderError ||
    grpcCode === GrpcStatus.UNAVAILABLE ||
    grpcCode === GrpcStatus.DEADLINE_EXCEEDED;
  const message = error instanceof Error ? error.message : String(error);
  return new AppError(transient ? 'UNAVAILABLE' : 'INTERNAL', `event store (esdb): ${message}`, { cause: error });
}

function parseJson(value: unknown): unknown {
  if (!(value instanceof Uint8Array)) return value;
  const text = Buffer.from(value).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  const metadata = parseJson(event.metadata);
  return {
    id: event.id,
    stream: event.streamId,
    type: event.type,
    data: parseJson(event.data),
    metadata: metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {},
    revision: Number(event.revision),
    // Stream reads carry the position only on servers after 22.6; -1 marks it unknown.
    position: event.position?.commit ?? -1n,
    time: event.created instanceof Date ? event.created.getTime() : Date.now(),
  };
}
