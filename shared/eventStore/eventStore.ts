/**
 * The event store port. Adapters: SQLite (embedded, and several processes on one machine),
 * PostgreSQL (several machines) and EventStoreDB. One contract suite
 * (test/contract/eventStoreContract.ts) runs against each.
 *
 * Revisions are 0-based per stream (the first event of a stream has revision 0), as in
 * EventStoreDB. Positions are global, strictly increasing across all streams (bigint, as ESDB's
 * commit position), and are what subscriptions checkpoint on.
 */
import { AppError } from '../errors.ts';

/** An event to append. `data` and `metadata` are JSON-serialisable objects. */
export interface EventData<T = Record<string, unknown>> {
  type: string;
  data: T;
  metadata?: Record<string, unknown>;
  /** A UUID; the adapter generates one when absent. */
  id?: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the store holds every stream's events; a reader names its type as T, and untyped readers (planner, notifier, tests) still index data directly
export interface RecordedEvent<T = any> {
  id: string;
  stream: string;
  type: string;
  data: T;
  metadata: Record<string, unknown>;
  revision: number;
  position: bigint;
  /** Append time, ms since the epoch. */
  time: number;
}

/** The revision the stream must be at: a number (its last event's revision), or a state. */
export type ExpectedRevision = number | 'no_stream' | 'stream_exists' | 'any';

export interface AppendResult {
  /** Revision of the last event appended. */
  nextRevision: number;
  /** Position of the last event appended. */
  position: bigint;
}

/** One stream's part of an appendMany. */
export interface StreamAppend {
  stream: string;
  /** At least one event. */
  events: EventData[];
  /** Default 'any'. */
  expectedRevision?: ExpectedRevision;
}

export interface ReadOptions {
  direction?: 'forwards' | 'backwards';
  /** Start here (inclusive). Default: the first event forwards, the last event backwards. */
  fromRevision?: number;
  /** At most this many events. Default: all. */
  maxCount?: number;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position; absent: from the beginning. */
  fromPosition?: bigint;
  /** Only streams named `<category>-...` (the part before the first '-'). */
  category?: string;
}

/** Called once per event, in position order; the next event waits until the promise settles. */
export type EventHandler = (event: RecordedEvent) => Promise<void> | void;

export interface Subscription {
  /** Stops delivery; resolves once no handler call is running. */
  close(): Promise<void>;
  /** Resolves once the subscription has delivered everything appended before it started (caught up). */
  readonly caughtUp: Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically. Throws `WrongExpectedRevisionError` when the stream is not at `expectedRevision`
   * (default 'any'). Appending no events is a no-op returning the current revision.
   */
  appendToStream(stream: string, events: EventData[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult>;
  /**
   * Appends to several streams (each named once, each given at least one event) in one
   * transaction: when one stream is not at its expected revision, `WrongExpectedRevisionError`
   * names it and nothing is written. Results follow the order of `appends`, and so do positions:
   * a subscriber sees the streams' events in that order. For writes to many streams at once (a
   * batch of new jobs): one commit instead of one per stream.
   *
   * EventStoreDB has no append to several streams at once: its adapter appends stream by stream,
   * so a failure there leaves the streams before the failing one written.
   */
  appendMany(appends: StreamAppend[]): Promise<AppendResult[]>;
  /** Reads a stream. A stream that does not exist reads as []. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as for RecordedEvent: the caller names the stream's event type
  readStream<T = any>(stream: string, options?: ReadOptions): Promise<RecordedEvent<T>[]>;
  /**
   * Subscribes to all events (or a category) from a checkpoint: first every stored event after it
   * (catch-up), then live ones, in position order, with no gap and no duplicate.
   * If the handler throws, the subscription stops and `onError` is called.
   */
  subscribe(options: SubscribeOptions, handler: EventHandler, onError?: (error: unknown) => void): Subscription;
  /** Keeps at most `maxCount` newest events in the stream; older ones stop being readable. */
  setStreamMaxCount(stream: string, maxCount: number): Promise<void>;
  close(): Promise<void>;
}

/** Optimistic-concurrency failure: the stream moved on since it was read. */
export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** What every adapter refuses in an appendMany before touching the store: a stream named twice, a stream given no event. */
export function checkAppendMany(appends: StreamAppend[]) {
  const seen = new Set<string>();
  for (const { stream, events } of appends) {
    if (seen.has(stream)) throw new AppError('INTERNAL', `appendMany: stream ${stream} is named twice`);
    if (events.length === 0) throw new AppError('INTERNAL', `appendMany: stream ${stream} is given no event`);
    seen.add(stream);
  }
}

/** The category of a stream: the part of its name before the first '-'. */
export const categoryOf = (stream: string) => {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(0, dash);
};

/** The name of an entity's stream: `<category>-<id>`, e.g. `cronjob-7`. */
export const streamName = (category: string, id: number | string) => `${category}-${id}`;

/** The id part of a stream's name: what follows the first '-' (`cronjob-7` -> `7`). */
export const streamIdOf = (stream: string) => {
  const dash = stream.indexOf('-');
  return dash < 0 ? '' : stream.slice(dash + 1);
};
