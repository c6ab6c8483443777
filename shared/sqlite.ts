import type Database from 'better-sqlite3';

/** Runs `step` again while SQLite answers BUSY, for up to `timeoutMs`. Opening is synchronous, so the pauses block. */
export function retryWhileBusy<T>(step: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return step();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(pause, 0, 0, 10 + Math.random() * 20);
    }
  }
}

/**
 * Puts the file in WAL mode. WAL is a property of the file: once set, later opens take no lock
 * for it. Setting it takes an exclusive lock for which SQLite does not call its busy handler, so
 * two processes opening one new file at once get BUSY at once: that is retried.
 */
export function useWal(db: Database.Database, timeoutMs: number) {
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') retryWhileBusy(() => db.pragma('journal_mode = WAL'), timeoutMs);
}
