import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { pendingMigrations, type MigrationResult, type SchemaPlan } from './schemaVersions.ts';

/**
 * Makes `path` a private file before SQLite opens it: its directory created 0700, the file created
 * (or tightened) 0600. SQLite gives its -wal and -shm files the mode of the database file, so they
 * follow. Job data and execution records are no one else's to read on a shared machine.
 */
export function privateDbFile(path: string): void {
  if (path === ':memory:' || path === '') return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
}

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

/**
 * Brings `plan.component`'s tables in the file to the plan's last version in one IMMEDIATE
 * transaction: processes opening the file together take turns on its write lock (SQLite's busy
 * handler waits; wrap in retryWhileBusy for the rest), and a failed migration leaves the version
 * the file had. Throws SchemaAheadError, changing nothing, when the file is past the plan.
 */
export function migrateSqlite(db: Database.Database, plan: SchemaPlan<string>): MigrationResult {
  return db
    .transaction((): MigrationResult => {
      db.exec(`CREATE TABLE IF NOT EXISTS tock_schema_version (
        component  TEXT NOT NULL,
        version    INTEGER NOT NULL,
        name       TEXT NOT NULL,
        applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        PRIMARY KEY (component, version)
      ) WITHOUT ROWID`);
      const from = (db.prepare('SELECT max(version) AS v FROM tock_schema_version WHERE component = ?').get(plan.component) as { v: number | null }).v ?? 0;
      const adopted = from === 0 && db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(plan.markerTable) !== undefined;
      const todo = pendingMigrations(plan, from);
      const record = db.prepare('INSERT INTO tock_schema_version (component, version, name) VALUES (?, ?, ?)');
      for (const m of todo) {
        db.exec(m.sql);
        record.run(plan.component, m.version, m.name);
      }
      if (plan.definitions) db.exec(plan.definitions);
      return { component: plan.component, from, to: from + todo.length, adopted };
    })
    .immediate();
}
