/**
 * EventStore on EventStoreDB, through @eventstore/db-client v6 (gRPC).
 *
 * Positions: our position is the event's commit position in $all. Events appended through gRPC are
 * implicit transactions in which every event has its own log record and commit == prepare, so the
 * commit position alone orders events strictly and `{commit: p, prepare: p}` resumes exactly after p.
 *
 * appendMany is not atomic here: the client (v6) has no append to several streams at once, so the
 * streams are appended one after the other, each with its own expected revision; a refusal or a
 * failure part way leaves the streams before it written (the port says so).
 *
 * The subscription (and how it knows it has caught up) is in esdbSubscription.ts; the mapping of
 * the client's types to ours in esdbRecords.ts.
 */
import { BACKWARDS, END, EventStoreDBClient, FORWARDS, jsonEvent, START, StreamNotFoundError } from '@eventstore/db-client';
import { checkAppendMany, WrongExpectedRevisionError, type EventStore, type RecordedEvent, type Subscription } from './eventStore.ts';
import { toEsdbExpected, toRecorded, translate } from './esdbRecords.ts';
import { subscribeEsdb } from './esdbSubscription.ts';

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

  const store: EventStore = {
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

    async appendMany(appends) {
      checkAppendMany(appends);
      const results = [];
      for (const a of appends) results.push(await store.appendToStream(a.stream, a.events, { expectedRevision: a.expectedRevision }));
      return results;
    },

    readStream: readStream as EventStore['readStream'],

    subscribe: (options, handler, onError) => {
      const subscription = subscribeEsdb(client, options, handler, onError, (closed) => subscriptions.delete(closed));
      subscriptions.add(subscription);
      return subscription;
    },

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
  return store;
}
