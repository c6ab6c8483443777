import { mkdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Config } from './config.ts';
import { AppError } from './errors.ts';
import type { EventStore } from './eventStore/eventStore.ts';
import { measuredEventStore } from './eventStore/measuredEventStore.ts';
import { BUSY_TIMEOUT_MS, openSqliteEventStore } from './eventStore/sqliteEventStore.ts';
import { migrateSqliteEventStore } from './eventStore/sqliteEventStoreSchema.ts';
import type { Logger } from './log.ts';
import { SchemaAheadError, type MigrationResult } from './schemaVersions.ts';

type StoreConfig = Pick<Config, 'EVENTSTORE_URL' | 'ESDB_URL' | 'DATA_DIR'>;

const isPostgres = (url: string) => url.startsWith('postgres://') || url.startsWith('postgresql://');

/** The event store URL in force: EVENTSTORE_URL, else the older ESDB_URL; undefined means SQLite. */
export const eventStoreUrl = (config: Pick<Config, 'EVENTSTORE_URL' | 'ESDB_URL'>): string | undefined => config.EVENTSTORE_URL ?? config.ESDB_URL;

/** Which store, for logs and messages: never the URL, which may hold a password. */
export function describeStore(config: StoreConfig): string {
  const url = eventStoreUrl(config);
  if (!url) return `sqlite (${join(config.DATA_DIR, 'events.db')})`;
  try {
    const { host, pathname } = new URL(url.replace(/^esdb\+discover:/, 'esdb:'));
    return `${isPostgres(url) ? 'postgres' : 'eventstoredb'} (${host}${isPostgres(url) ? pathname : ''})`;
  } catch {
    return isPostgres(url) ? 'postgres' : 'eventstoredb';
  }
}

/**
 * PostgreSQL or EventStoreDB as EVENTSTORE_URL (or ESDB_URL) says; otherwise the SQLite file under
 * DATA_DIR (safe across processes on one machine). EventStoreDB credentials and TLS settings come
 * from the URL (`esdb://user:pass@host:2113?tls=true&tlsCAFile=/path/ca.crt`).
 */
export async function openStore(config: StoreConfig): Promise<EventStore> {
  return measuredEventStore(await openAdapter(config));
}

// The PostgreSQL and EventStoreDB adapters are imported only when chosen: their drivers are much
// of a process's start-up, and every process (each service, each CLI command) would pay for both.
async function openAdapter(config: StoreConfig): Promise<EventStore> {
  const url = eventStoreUrl(config);
  if (url && isPostgres(url)) return (await import('./eventStore/postgresEventStore.ts')).openPostgresEventStore(url);
  if (url) {
    const { openEsdbEventStore } = await import('./eventStore/esdbEventStore.ts');
    try {
      return openEsdbEventStore(url);
    } catch (error) {
      // The client's own message names the setting at fault; the URL itself (and its password) stays out.
      throw new AppError('INVALID_PARAMETER', `event store (esdb): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  mkdirSync(config.DATA_DIR, { recursive: true, mode: 0o700 });
  return openSqliteEventStore(join(config.DATA_DIR, 'events.db'));
}

/**
 * Brings the configured event store's tables to this code's schema version (`tock migrate`, and a
 * service's start). Undefined for EventStoreDB, which has no tables of Tock's. Throws
 * SchemaAheadError when a newer Tock migrated them.
 */
export async function migrateStore(config: StoreConfig): Promise<MigrationResult | undefined> {
  const url = eventStoreUrl(config);
  if (url && isPostgres(url)) return (await import('./eventStore/postgresEventStoreSchema.ts')).migratePostgresEventStore(url);
  if (url) return undefined;
  mkdirSync(config.DATA_DIR, { recursive: true, mode: 0o700 });
  return migrateSqliteEventStore(join(config.DATA_DIR, 'events.db'), BUSY_TIMEOUT_MS);
}

/**
 * For a main(), before it opens the store: migrates it, or exits (1) when a newer Tock migrated it,
 * so a rolled-back image never writes to tables it does not know. A database that does not answer
 * yet does not hold the start up (the service starts unready, as it always has): the store
 * migrates, or refuses every call, before its first call that reaches the database.
 */
export async function migrateStoreOrExit(config: StoreConfig, log: Logger): Promise<void> {
  try {
    const result = await migrateStore(config);
    if (result && result.from !== result.to) log.info('event store schema migrated', { from: result.from, to: result.to, adopted: result.adopted });
  } catch (error) {
    if (error instanceof SchemaAheadError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    log.warn('event store schema not checked at start: it is migrated before the first call that reaches the database', { error });
  }
}

export type LogsStoreChoice = { kind: 'postgres'; url: string } | { kind: 'sqlite'; path: string };

/**
 * Where the logs read model lives: LOGS_DB_URL when set (`sqlite:<file>` relative to DATA_DIR,
 * like every other file Tock keeps, not to whichever directory the process was started in); else
 * the event store's PostgreSQL (its schema plus `_logs`) when the event store is PostgreSQL, so
 * every replica shares one; else SQLite under DATA_DIR, one file per process.
 */
export function logsStoreChoice(config: StoreConfig & Pick<Config, 'LOGS_DB_URL'>): LogsStoreChoice {
  const chosen = config.LOGS_DB_URL;
  if (chosen?.startsWith('sqlite:')) {
    const file = chosen.slice('sqlite:'.length) || 'logs.db';
    return { kind: 'sqlite', path: isAbsolute(file) ? file : join(config.DATA_DIR, file) };
  }
  if (chosen) return { kind: 'postgres', url: chosen };
  const events = eventStoreUrl(config);
  if (events && isPostgres(events)) {
    const url = new URL(events);
    url.searchParams.set('schema', `${url.searchParams.get('schema') ?? 'tock'}_logs`);
    return { kind: 'postgres', url: url.toString() };
  }
  return { kind: 'sqlite', path: join(config.DATA_DIR, 'logs.db') };
}
