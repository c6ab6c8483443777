/**
 * EventStore on EventStoreDB, through @eventstore/db-client v6 (gRPC).
 *
 * Positions: our position is the event's commit position in $all. Events appended through gRPC are
 * implicit transactions in which every event has its own log record and commit == prepare, so the
 * commit position alone orders events strictly and `{commit: p, prepare: p}` resumes exactly after p.
 *
 * Caught-up detection, in two ways, whichever comes first:
 * - servers from 23.10 send a CaughtUp message, which the client emits as 'caughtUp';
 * - for older servers, the last position of $all is read when the subscription starts, and the
 *   subscription counts as caught up once it has seen that position (an event, even one skipped as
 *   a system event, or, on a category subscription, a filter checkpoint at or past it).
 * Either signal is queued behind the events the client had already taken in, so `caughtUp` resolves
 * only after the handler has run for all of them.
 */
import {
  ANY,
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  FORWARDS,
  jsonEvent,
  NO_STREAM,
  NotLeaderError,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  streamNameFilter,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type CurrentRevision,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { AppError } from '../errors.ts';
import { timeSlicer } from '../timeSlice.ts';
import {
  categoryOf,
  WrongExpectedRevisionError,
  type EventHandler,
  type EventStore,
  type ExpectedRevision,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './eventStore.ts';

// Stop pulling from the server while this many events wait for the handler; resume below LOW_WATER.
const HIGH_WATER = 256;
const LOW_WATER = 64;
const CAUGHT_UP = Symbol('caughtUp');

const toEsdbExpected = (expected: ExpectedRevision): AppendExpectedRevision =>
  expected === 'any' ? ANY
  : expected === 'no_stream' ? NO_STREAM
  : expected === 'stream_exists' ? STREAM_EXISTS
  : BigInt(expected);

const fromEsdbRevision = (actual: CurrentRevision): number | 'no_stream' =>
  actual === NO_STREAM ? 'no_stream' : Number(actual);

/** Translates client failures into the project's error types; our own errors pass through. */
function translate(error: unknown, stream?: string, expected?: ExpectedRevision): unknown {
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

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
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

/** Connects to EventStoreDB, e.g. `esdb://localhost:2113?tls=false`. */
export function openEsdbEventStore(connectionString: string): EventStore {
  const client = EventStoreDBClient.connectionString(connectionString);
  const subscriptions = new Set<Subscription>();

  async function readStream(stream: string, options: { direction?: 'forwards' | 'backwards'; fromRevision?: number; maxCount?: number } = {}) {
    if (options.maxCount === 0) return [];
    const backwards = options.direction === 'backwards';
    const events: RecordedEvent[] = [];
    try {
      const reading = client.readStream(stream, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : START,
        ...(options.maxCount !== undefined && { maxCount: options.maxCount }),
      });
      for await (const resolved of reading) if (resolved.event) events.push(toRecorded(resolved.event));
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw translate(error);
    }
    return events;
  }

  /** The last position of $all (system events included), or -1 for an empty database. */
  async function headOfAll(): Promise<bigint> {
    for await (const resolved of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) {
      if (resolved.event) return resolved.event.position.commit;
    }
    return -1n;
  }

  function subscribe(options: SubscribeOptions, handler: EventHandler, onError?: (error: unknown) => void): Subscription {
    const from = options.fromPosition;
    const category = options.category;
    const queue: (RecordedEvent | typeof CAUGHT_UP)[] = [];
    let stopped = false;
    let paused = false;
    let wake: (() => void) | undefined;
    let received = 0; // events taken off the client's stream
    let markerAt = Infinity; // the caught-up marker is due once `received` reaches this
    let markerQueued = false;
    let head: bigint | undefined;
    let maxSeen = -1n;
    let checkpoint: { position: bigint; at: number } | undefined;
    let markCaughtUp!: () => void;
    const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

    const enqueue = (item: RecordedEvent | typeof CAUGHT_UP) => {
      queue.push(item);
      wake?.();
      if (queue.length >= HIGH_WATER && !paused) {
        paused = true;
        live.pause();
      }
    };
    const queueCaughtUp = () => {
      if (markerQueued) return;
      markerQueued = true;
      enqueue(CAUGHT_UP);
    };
    // The client buffers events it has read but not yet handed over; the marker must follow them.
    const caughtUpAfter = (at: number) => {
      markerAt = Math.min(markerAt, at);
      if (received >= markerAt) queueCaughtUp();
    };

    const live = client.subscribeToAll({
      fromPosition: from === undefined ? START : { commit: from, prepare: from },
      ...(category !== undefined && {
        filter: streamNameFilter({
          prefixes: [`${category}-`],
          checkpointInterval: 1,
          checkpointReached: (_subscription, position) => {
            const at = received + live.readableLength;
            if (head === undefined) checkpoint = { position: position.commit, at };
            else if (position.commit >= head) caughtUpAfter(at);
          },
        }),
      }),
    });

    live.on('data', (resolved: AllStreamResolvedEvent) => {
      received++;
      const event = resolved.event;
      if (event) {
        const position = event.position.commit;
        if (position > maxSeen) maxSeen = position;
        // Positions at or before the checkpoint are dropped whether the server treats it as inclusive or not.
        const wanted =
          (from === undefined || position > from) &&
          !event.type.startsWith('$') &&
          (category === undefined || categoryOf(event.streamId) === category);
        if (wanted) enqueue(toRecorded(event));
        if (head !== undefined && position >= head) queueCaughtUp();
      }
      if (received >= markerAt) queueCaughtUp();
    });
    live.on('caughtUp', () => caughtUpAfter(received + live.readableLength));
    live.on('error', (error) => fail(translate(error)));
    live.on('end', () => fail(new AppError('INTERNAL', 'event store (esdb): the server ended the subscription')));

    headOfAll().then(
      (position) => {
        head = position;
        if (position < 0n || (from !== undefined && position <= from) || maxSeen >= position) queueCaughtUp();
        else if (checkpoint && checkpoint.position >= position) caughtUpAfter(checkpoint.at);
      },
      // Not fatal: the server's own caught-up message still applies.
      () => undefined,
    );

    function fail(error: unknown) {
      if (stopped) return;
      stopped = true;
      wake?.();
      live.unsubscribe().catch(() => undefined);
      if (onError) onError(error);
      else console.error('event store subscription stopped:', error);
    }

    // Handlers may be costly (a schedule to plan per job event): a long queue is handled in time slices.
    const slice = timeSlicer();
    const running = (async () => {
      while (!stopped) {
        const item = queue.shift();
        if (item === undefined) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        } else if (item === CAUGHT_UP) {
          markCaughtUp();
        } else {
          await handler(item);
          await slice();
          if (paused && queue.length <= LOW_WATER) {
            paused = false;
            live.resume();
          }
        }
      }
    })().catch(fail);

    const subscription: Subscription = {
      caughtUp,
      async close() {
        if (!stopped) {
          stopped = true;
          wake?.();
          await live.unsubscribe().catch(() => undefined);
        }
        await running;
        subscriptions.delete(subscription);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  return {
    async appendToStream(stream, events, options = {}) {
      const expected = options.expectedRevision ?? 'any';
      if (events.length === 0) {
        // Nothing to write, but the expectation is still checked, as the SQLite adapter does.
        const [last] = await readStream(stream, { direction: 'backwards', maxCount: 1 });
        const current = last ? last.revision : -1;
        const ok =
          expected === 'any' ||
          (expected === 'no_stream' && current < 0) ||
          (expected === 'stream_exists' && current >= 0) ||
          expected === current;
        if (!ok) throw new WrongExpectedRevisionError(stream, expected, current < 0 ? 'no_stream' : current);
        return { nextRevision: current, position: last ? last.position : 0n };
      }
      try {
        const result = await client.appendToStream(
          stream,
          events.map((e) => jsonEvent({ type: e.type, data: e.data, metadata: e.metadata ?? {}, id: e.id })),
          { expectedRevision: toEsdbExpected(expected) },
        );
        return { nextRevision: Number(result.nextExpectedRevision), position: result.position?.commit ?? -1n };
      } catch (error) {
        throw translate(error, stream, expected);
      }
    },

    readStream: readStream as EventStore['readStream'],

    subscribe,

    async setStreamMaxCount(stream, maxCount) {
      try {
        // Metadata is written whole: keep whatever else (ACLs, custom keys) the stream already has.
        const { metadata } = await client.getStreamMetadata(stream);
        await client.setStreamMetadata(stream, { ...metadata, maxCount });
      } catch (error) {
        throw translate(error);
      }
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.close()));
      await client.dispose();
    },
  };
}
