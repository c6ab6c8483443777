/**
 * Subscriptions of the SQLite event store: each one pages through `position > checkpoint` to catch
 * up, then waits for appends, woken at once by appends of this process and by polling for those of
 * other processes sharing the file.
 */
import { timeSlicer } from '../timeSlice.ts';
import type { EventHandler, RecordedEvent, SubscribeOptions, Subscription } from './eventStore.ts';
import { runSubscription, type LoopState } from './subscriptionLoop.ts';

export const PAGE_SIZE = 256;

/**
 * Appends made through any store object of this process bump `version` and wake the waiters, so
 * subscriptions on the same file react at once; other processes' appends are found by polling.
 */
export interface Notifier {
  version: number;
  waiters: Set<() => void>;
  users: number;
}
const notifiers = new Map<string, Notifier>();

export function acquireNotifier(key: string): Notifier {
  let notifier = notifiers.get(key);
  if (!notifier) notifiers.set(key, (notifier = { version: 0, waiters: new Set(), users: 0 }));
  notifier.users++;
  return notifier;
}

/** The store object holding `notifier` under `key` is closed; the last one out removes it. */
export function releaseNotifier(key: string, notifier: Notifier) {
  if (--notifier.users === 0) notifiers.delete(key);
}

/** Called after an append commits: wakes every subscription of this process on the file. */
export function notifyAppended(notifier: Notifier) {
  notifier.version++;
  for (const wake of [...notifier.waiters]) wake();
}

/** What a subscription reads from: one store object's database, notifier and open subscriptions. */
export interface SubscriptionSource<Row extends { position: number }> {
  notifier: Notifier;
  /** A private `:memory:` database: no other process can append, so there is nothing to poll for. */
  memory: boolean;
  pollIntervalMs: number;
  /**
   * Up to PAGE_SIZE rows after `checkpoint`, in position order, and the position up to which the
   * page accounts for the file (the subscription resumes after it); store failures come out translated.
   */
  readPage: (options: SubscribeOptions, checkpoint: number) => { rows: Row[]; through: number };
  toRecorded: (row: Row) => RecordedEvent;
  /** Each subscription is in here until closed, so closing the store closes it. */
  subscriptions: Set<Subscription>;
}

/**
 * Each event decoded once for all the subscriptions of one store object. The jobs view, the
 * planner and the notifier's view follow the same appends, and decoding (JSON) is most of what
 * handing them an event costs. They share the decoded event: events are facts, and no handler
 * changes one (every fold copies what it changes). The last `kept` positions are kept, enough
 * for subscriptions a few pages apart; one further behind decodes its own.
 */
export function decodedOnce<Row extends { position: number }>(decode: (row: Row) => RecordedEvent, kept = 4096): (row: Row) => RecordedEvent {
  // A ring by position: positions are consecutive integers, so slot `position % kept` holds the
  // latest event decoded for that slot (a lookup without a hash or an allocation).
  const positions = new Float64Array(kept).fill(-1);
  const events: RecordedEvent[] = new Array<RecordedEvent>(kept);
  return (row) => {
    const slot = row.position % kept;
    if (positions[slot] === row.position) return events[slot]!;
    const event = decode(row);
    positions[slot] = row.position;
    events[slot] = event;
    return event;
  };
}

export function startSubscription<Row extends { position: number }>(
  source: SubscriptionSource<Row>,
  options: SubscribeOptions,
  handler: EventHandler,
  onError?: (error: unknown) => void,
): Subscription {
  const { notifier, memory, pollIntervalMs, toRecorded } = source;
  let checkpoint = Number(options.fromPosition ?? 0n);

  // Resolves on the next append in this process, the next poll tick (files only), or close.
  const waitForAppends = (state: LoopState, seenVersion: number) =>
    new Promise<void>((resolve) => {
      if (state.stopped || notifier.version !== seenVersion) return resolve();
      const timer = memory ? undefined : setTimeout(done, pollIntervalMs);
      function done() {
        clearTimeout(timer);
        notifier.waiters.delete(done);
        state.interrupt = undefined;
        resolve();
      }
      notifier.waiters.add(done);
      state.interrupt = done;
    });

  // Handlers may be costly (a schedule to plan per job event): a page is handled in time slices.
  const slice = timeSlicer();
  return runSubscription(
    source.subscriptions,
    async (state) => {
      while (!state.stopped) {
        // Taken before the read: an append landing while handlers run must not be slept through.
        const version = notifier.version;
        const { rows, through } = source.readPage(options, checkpoint);
        for (const row of rows) {
          if (state.stopped) return;
          await handler(toRecorded(row));
          checkpoint = row.position;
          await slice();
        }
        checkpoint = Math.max(checkpoint, through);
        if (rows.length < PAGE_SIZE) {
          state.markCaughtUp();
          await waitForAppends(state, version);
        } else {
          // Reads are synchronous: without a macrotask break a long catch-up would starve timers and I/O.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    },
    onError,
  );
}
