/**
 * Counted leases: at most `max` holders of a key at once, each until its lease expires. This is
 * how `instances` holds across every executor replica. Adapters: in-memory (embedded mode) and a
 * NATS KV bucket with compare-and-set (distributed mode).
 */
export interface Leases {
  /** Takes a slot of `key` for `holder` for `ttlMs` (the same holder again: renewed). False when all `max` slots are held. */
  acquire(key: string, holder: string, max: number, ttlMs: number): Promise<boolean>;
  release(key: string, holder: string): Promise<void>;
  close(): Promise<void>;
}

/** Holders of one key as stored: holder -> expiry (ms since the epoch). */
export type Holders = Record<string, number>;

/** Pure: the holders after `holder` asks for a slot at `now`, or null when the key is full. */
export function takeSlot(holders: Holders, holder: string, max: number, ttlMs: number, now: number): Holders | null {
  const live: Holders = {};
  for (const [h, expiry] of Object.entries(holders)) if (expiry > now) live[h] = expiry;
  if (!(holder in live) && Object.keys(live).length >= max) return null;
  live[holder] = now + ttlMs;
  return live;
}

export function createMemoryLeases(now: () => number = Date.now): Leases {
  const keys = new Map<string, Holders>();
  return {
    async acquire(key, holder, max, ttlMs) {
      const next = takeSlot(keys.get(key) ?? {}, holder, max, ttlMs, now());
      if (next) keys.set(key, next);
      return next !== null;
    },
    async release(key, holder) {
      const holders = keys.get(key);
      if (!holders) return;
      delete holders[holder];
      if (Object.keys(holders).length === 0) keys.delete(key);
    },
    async close() {},
  };
}
