import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.ts';
import { openEsdbEventStore } from './eventStore/esdbEventStore.ts';
import type { EventStore } from './eventStore/eventStore.ts';
import { openSqliteEventStore } from './eventStore/sqliteEventStore.ts';

/** EventStoreDB when ESDB_URL is set; otherwise the SQLite file under DATA_DIR (safe across processes on one machine). */
export function openStore(config: Pick<Config, 'ESDB_URL' | 'DATA_DIR'>): EventStore {
  if (config.ESDB_URL) return openEsdbEventStore(config.ESDB_URL);
  mkdirSync(config.DATA_DIR, { recursive: true, mode: 0o700 });
  return openSqliteEventStore(join(config.DATA_DIR, 'events.db'));
}
