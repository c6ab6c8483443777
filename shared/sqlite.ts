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

const isBusy = (error: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: string }).code ?? ''));

/**
 * Runs `step` again while SQLite answers BUSY, for up to `timeoutMs`, pausing between attempts
 * without blocking: while another connection holds the write lock for long (a stuck process, an
 * operator's BEGIN EXCLUSIVE), the event loop keeps serving health checks, timers and other work.
 * The connection's own busy timeout should be short, so each attempt blocks only briefly.
 */
export async function retryWhileBusyAsync<T>(step: () => T, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return step();
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random())));
    }
  }
}
