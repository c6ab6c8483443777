import { watchCondition, type Readiness, type WatchOptions } from '../readiness.ts';
import type { EventStore } from './eventStore.ts';

/** The stream a probe "appends" nothing to: it exists only in name, and no subscription sees it. */
const PROBE_STREAM = 'health-probe';

/**
 * Keeps the `event store` readiness condition true while the store takes writes. Subscriptions
 * can keep reading a store that refuses writes (an SQLite file whose write lock someone holds, a
 * cluster without a leader), so the probe is an append of no events: it takes the write path
 * (the write lock on SQLite, a leader read on EventStoreDB, a connection on PostgreSQL) and
 * stores nothing. Every `everyMs` (default 1 s); one slower than `timeoutMs` (default 2 s) fails.
 * Returns a stop function.
 */
export function watchStore(store: EventStore, readiness: Readiness, options: Omit<WatchOptions, 'failing'> = {}) {
  return watchCondition(readiness, 'event store', () => store.appendToStream(PROBE_STREAM, []), { ...options, failing: 'writes fail' });
}
