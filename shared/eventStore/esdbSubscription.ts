/**
 * The EventStoreDB adapter's subscription (shared/eventStore/esdbEventStore.ts).
 *
 * Caught-up detection, in two ways, whichever comes first:
 * - servers from 23.10 send a CaughtUp message, which the client emits as 'caughtUp';
 * - for older servers, the last position of $all is read when the subscription starts, and the
 *   subscription counts as caught up once it has seen that position (an event, even one skipped as
 *   a system event, or, on a category subscription, a filter checkpoint at or past it).
 * Either signal is queued behind the events the client had already taken in, so `caughtUp` resolves
 * only after the handler has run for all of them.
 */
import { BACKWARDS, END, START, streamNameFilter, type AllStreamResolvedEvent, type EventStoreDBClient } from '@eventstore/db-client';
import { AppError } from '../errors.ts';
import { timeSlicer } from '../timeSlice.ts';
import { categoryOf, type EventHandler, type RecordedEvent, type SubscribeOptions, type Subscription } from './eventStore.ts';
import { toRecorded, translate } from './esdbRecords.ts';

// Stop pulling from the server while this many events wait for the handler; resume below LOW_WATER.
const HIGH_WATER = 256;
const LOW_WATER = 64;
const CAUGHT_UP = Symbol('caughtUp');

/** The last position of $all (system events included), or -1 for an empty database. */
async function headOfAll(client: EventStoreDBClient): Promise<bigint> {
  for await (const resolved of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) {
    if (resolved.event) return resolved.event.position.commit;
  }
  return -1n;
}

/**
 * A subscription to $all (or one category) from a position, handled in order through a bounded
 * queue; `onClose` is told when it is closed, so the store can close what is still open.
 */
export function subscribeEsdb(
  client: EventStoreDBClient,
  options: SubscribeOptions,
  handler: EventHandler,
  onError: ((error: unknown) => void) | undefined,
  onClose: (subscription: Subscription) => void,
): Subscription {
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

  headOfAll(client).then(
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
      onClose(subscription);
    },
  };
  return subscription;
}
