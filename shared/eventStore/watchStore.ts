import type { Logger } from '../log.ts';
import type { Readiness } from '../readiness.ts';
import type { EventStore } from './eventStore.ts';

/** The stream a probe "appends" nothing to: it exists only in name, and no subscription sees it. */
const PROBE_STREAM = 'health-probe';

/**
 * Keeps the `event store` readiness condition true while the store takes writes. Subscriptions
 * can keep reading a store that refuses writes (an SQLite file whose write lock someone holds, a
 * cluster without a leader), so the probe is an append of no events: it takes the write path
 * (the write lock on SQLite, a leader read on EventStoreDB) and stores nothing. It runs every
 * `everyMs` (default 1 s); one slower than `timeoutMs` (default 2 s) counts as a failure. Returns a stop function.
 */
export function watchStore(store: EventStore, readiness: Readiness, options: { log?: Logger; everyMs?: number; timeoutMs?: number } = {}) {
  const everyMs = options.everyMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 2000;
  const condition = 'event store';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // At most one probe at the store at a time: a slow one is waited for again, never piled on.
  let inFlight: Promise<unknown> | null = null;
  const probe = async () => {
    let timeout: NodeJS.Timeout | undefined;
    try {
      inFlight ??= store.appendToStream(PROBE_STREAM, []).finally(() => (inFlight = null));
      await Promise.race([
        inFlight,
        new Promise((_, reject) => (timeout = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
      ]);
      if (!stopped) readiness.set(condition, true);
    } catch (error) {
      if (!stopped) readiness.set(condition, false, `writes fail: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(timeout);
      // probe catches everything itself: nothing to await or handle here.
      if (!stopped) timer = setTimeout(() => void probe(), everyMs);
    }
  };
  void probe();
  return () => {
    stopped = true;
    clearTimeout(timer);
    readiness.clear(condition);
  };
}
