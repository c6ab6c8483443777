import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Bus, Consumer } from '../../shared/bus/bus.ts';
import { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { addHealthService } from '../../shared/grpc/health.ts';
import type { Logger } from '../../shared/log.ts';
import { createReadiness, watchCondition, type Readiness } from '../../shared/readiness.ts';
import { boundAddress, type ServiceHandle } from '../../shared/service.ts';
import { CONSUMERS, ensureTopology } from '../../shared/topology.ts';
import { logsGrpcImpl } from './grpcServer.ts';
import type { LogsView, LogsViewOptions } from './logsView.ts';
import type { MigrationResult } from '../../shared/schemaVersions.ts';
import { createRecorder } from './recorder.ts';
import { migrateSqliteLogsView, openSqliteLogsView } from './sqliteLogsView.ts';

export interface LogsServiceOptions extends LogsViewOptions {
  bus: Bus;
  /** SQLite file of the read model (':memory:' allowed). Missing: rebuilt from the EXECUTIONS stream. */
  dbPath?: string;
  /** PostgreSQL read model (`postgres://...`, optional `?schema=`), shared by every replica; wins over dbPath. */
  dbUrl?: string;
  log: Logger;
  /** host:port for gRPC; port 0 picks one. */
  address: string;
  /** Who may call it (none: anyone who reaches the address; only for tests and an explicit insecure flag). */
  credentials?: GrpcCredentials;
  /** The process's readiness, served by the gRPC health service; a new one when absent. */
  readiness?: Readiness;
}

/** The logs service's inner pieces, for embedded wiring and tests. */
export interface LogsParts {
  view: LogsView;
  /** The durable consumer this read model reads EXECUTIONS with. */
  durable: string;
}

export type LogsServiceHandle = ServiceHandle<LogsParts>;

const DURABLE_KEY = 'durable';

/**
 * The durable this database consumes with. Each database gets its own (`logs-<random>`), kept in
 * its meta table: a new or emptied database starts a new durable from the first message, so the
 * whole stream is replayed into it; an existing one resumes where it stopped. Replicas with a file
 * each get a durable each and each see every execution; replicas sharing one PostgreSQL read model
 * share its one durable (the first to start names it) and split the executions between them.
 */
const durableOf = (view: LogsView): Promise<string> =>
  view.claimMeta(DURABLE_KEY, `${CONSUMERS.logs.durable}-${randomBytes(8).toString('hex')}`);

// The PostgreSQL adapter (and its driver) is imported only when chosen: a logs service on SQLite
// never loads it.
async function openView(options: LogsServiceOptions): Promise<LogsView> {
  if (options.dbUrl) return (await import('./postgresLogsView.ts')).openPostgresLogsView(options.dbUrl, options);
  const path = options.dbPath ?? ':memory:';
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return openSqliteLogsView(path, options);
}

/**
 * Brings the logs read model's database (PostgreSQL when `dbUrl`, else the SQLite file) to this
 * code's schema version: `tock migrate`, and every start. Throws SchemaAheadError when a newer Tock
 * migrated it. Undefined for an in-memory file, which has nothing to migrate.
 */
export async function migrateLogsDatabase(options: Pick<LogsServiceOptions, 'dbUrl' | 'dbPath'>): Promise<MigrationResult | undefined> {
  if (options.dbUrl) return (await import('./postgresLogsSchema.ts')).migratePostgresLogsView(options.dbUrl);
  const path = options.dbPath ?? ':memory:';
  return path === ':memory:' ? undefined : migrateSqliteLogsView(path);
}

/** Consumes EXECUTIONS into the logs read model and serves LogsService over gRPC. */
export async function startLogsService(options: LogsServiceOptions): Promise<LogsServiceHandle> {
  const { bus, log } = options;
  // Before anything else: a database a newer Tock migrated stops the start here, untouched.
  const migrated = await migrateLogsDatabase(options);
  if (migrated && migrated.from !== migrated.to) log.info('logs read model schema migrated', { from: migrated.from, to: migrated.to, adopted: migrated.adopted });
  const view = await openView(options);
  const server = createGrpcServer(options.credentials ?? {});
  let consumer: Consumer | undefined;
  try {
    await ensureTopology(bus);
    const durable = await durableOf(view);
    consumer = await bus.consume({ ...CONSUMERS.logs, durable, deliverPolicy: 'all' }, createRecorder(view, log));
    addService(server, LogsService, logsGrpcImpl(view), log);
    const readiness = options.readiness ?? createReadiness(log);
    const unwatch = addHealthService(server, readiness, [LogsService.typeName]);
    // Unready while the database does not answer (a PostgreSQL restart): executions wait on the
    // bus meanwhile (redelivered after a failed write), and cron_logs would fail.
    const unwatchDb = watchCondition(readiness, 'logs database', () => view.getMeta(DURABLE_KEY), { failing: 'queries fail' });
    const address = boundAddress(options.address, await startServer(server, options.address, options.credentials ?? {}));
    log.info('logs service listening', { address, durable, size: await view.size() });
    return {
      addresses: { grpc: address },
      readiness,
      view,
      durable,
      async stop() {
        // Consumer first: in-flight batches commit and ack before the database closes.
        await consumer?.stop();
        unwatchDb();
        unwatch();
        await stopServer(server);
        await view.close();
      },
    };
  } catch (error) {
    await consumer?.stop().catch(() => undefined);
    server.forceShutdown();
    await view.close().catch(() => undefined);
    throw error;
  }
}
