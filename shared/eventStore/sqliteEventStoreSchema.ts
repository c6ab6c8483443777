/**
 * The SQLite event store's tables, as an ordered list of migrations (shared/schemaVersions.ts),
 * recorded in the file's `tock_schema_version` under the component `events`.
 */
import Database from 'better-sqlite3';
import type { MigrationResult, SchemaPlan } from '../schemaVersions.ts';
import { migrateSqlite, privateDbFile, retryWhileBusy, useWal } from '../sqlite.ts';

// Migration 1 is the schema as the code before schema versions created it: repeatable, so it runs
// over such a file's tables without changing them. Later migrations are appended, never edited.
const INITIAL_SCHEMA = `
  CREATE TABLE IF NOT EXISTS streams (
    name      TEXT PRIMARY KEY,
    revision  INTEGER NOT NULL,
    max_count INTEGER
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    id       TEXT NOT NULL,
    stream   TEXT NOT NULL,
    revision INTEGER NOT NULL,
    category TEXT NOT NULL,
    type     TEXT NOT NULL,
    data     TEXT NOT NULL,
    metadata TEXT NOT NULL,
    time     INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX IF NOT EXISTS events_by_stream ON events (stream, revision);
  CREATE INDEX IF NOT EXISTS events_by_category ON events (category, position);
`;

export const SQLITE_EVENT_STORE_SCHEMA: SchemaPlan<string> = {
  component: 'events',
  what: 'event store (sqlite)',
  markerTable: 'events',
  migrations: [{ version: 1, name: 'events and streams', sql: INITIAL_SCHEMA }],
};

/**
 * Brings the file at `path` (created if needed) to this code's schema version and closes it: for
 * `tock migrate` and a service's start. Opening the store does the same.
 */
export function migrateSqliteEventStore(path: string, busyTimeoutMs: number): MigrationResult {
  privateDbFile(path);
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    useWal(db, busyTimeoutMs);
    return retryWhileBusy(() => migrateSqlite(db, SQLITE_EVENT_STORE_SCHEMA), busyTimeoutMs);
  } finally {
    db.close();
  }
}
