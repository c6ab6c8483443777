import { noPositionals, parse } from './args.ts';
import type { Io } from './io.ts';
import { json } from './output.ts';
import { describeMigration, type MigrationResult } from '../../shared/schemaVersions.ts';

export const MIGRATE_USAGE = `usage: tock migrate [--json]
Brings Tock's tables to this version's schema and prints each database's schema version before
and after: the event store (EVENTSTORE_URL, else DATA_DIR/events.db) and the logs read model
(LOGS_DB_URL, else the event store's PostgreSQL in the schema <schema>_logs, else
DATA_DIR/logs.db). Safe to run again and from several places at once: one applies a migration,
the others wait for it and find it done. Services do the same when they start.
Refuses (exit 1), changing nothing, a database that a newer Tock has migrated.`;

/** One database's line: where its tables are and what happened to them. */
interface Part {
  part: string;
  where: string;
  /** Undefined: nothing of Tock's to migrate there (EventStoreDB). */
  migrated?: MigrationResult;
}

/** `postgres (host:port/db, schema s)`: where the tables are, without the URL's password. */
function postgresWhere(url: string, fallbackSchema: string): string {
  const parsed = new URL(url);
  return `postgres (${parsed.host}${parsed.pathname}, schema ${parsed.searchParams.get('schema') ?? fallbackSchema})`;
}

/** `tock migrate`: the event store's and the logs read model's migrations, straight to their databases. */
export async function migrateCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {}, MIGRATE_USAGE);
  noPositionals({ values, positionals }, MIGRATE_USAGE);
  // Loaded only now: the store modules are what makes a command slow to start.
  const { loadConfigOrExit } = await import('../../shared/config.ts');
  const { describeStore, eventStoreUrl, logsStoreChoice, migrateStore } = await import('../../shared/openStore.ts');
  const { migrateLogsDatabase } = await import('../logs/service.ts');
  const config = loadConfigOrExit(io.env);
  const parts: Part[] = [];
  const show = (p: Part) => {
    parts.push(p);
    if (values.json !== true) io.out(`${p.part}: ${p.where}: ${p.migrated ? describeMigration(p.migrated) : 'no tables of Tock\'s, nothing to migrate'}`);
  };

  const storeUrl = eventStoreUrl(config);
  const storeWhere = storeUrl?.startsWith('postgres') ? postgresWhere(storeUrl, 'tock') : describeStore(config);
  show({ part: 'event store', where: storeWhere, migrated: await migrateStore(config) });

  const logs = logsStoreChoice(config);
  const logsWhere = logs.kind === 'postgres' ? postgresWhere(logs.url, 'tock_logs') : `sqlite (${logs.path})`;
  show({ part: 'logs read model', where: logsWhere, migrated: await migrateLogsDatabase(logs.kind === 'postgres' ? { dbUrl: logs.url } : { dbPath: logs.path }) });

  if (values.json === true) json(io.out, parts.map((p) => ({ part: p.part, where: p.where, from: p.migrated?.from ?? null, to: p.migrated?.to ?? null, adopted: p.migrated?.adopted ?? false })));
  return 0;
}
