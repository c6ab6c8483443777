import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Bus, Consumer } from '../../shared/bus/bus.ts';
import { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import type { Logger } from '../../shared/log.ts';
import { CONSUMERS, ensureTopology } from '../../shared/topology.ts';
import { logsGrpcImpl } from './grpcServer.ts';
import { LogsView, type LogsViewOptions } from './logsView.ts';
import { createRecorder } from './recorder.ts';

export interface LogsServiceOptions extends LogsViewOptions {
  bus: Bus;
  /** SQLite file of the read model (':memory:' allowed). Missing: rebuilt from the EXECUTIONS stream. */
  dbPath: string;
  log: Logger;
  /** host:port for gRPC; port 0 picks one. */
  address: string;
}

export interface LogsServiceHandle {
  /** host:port actually bound. */
  address: string;
  view: LogsView;
  /** The durable consumer this read model reads EXECUTIONS with. */
  durable: string;
  stop(): Promise<void>;
}

const DURABLE_KEY = 'durable';

/**
 * The durable this database consumes with. Each database gets its own (`logs-<random>`), kept in
 * its meta table: a new or deleted file starts a new durable from the first message, so the whole
 * stream is replayed into it; an existing file resumes where it stopped. It also lets several
 * replicas, each with its own file, each see every execution.
 */
function durableOf(view: LogsView): string {
  const stored = view.getMeta(DURABLE_KEY);
  if (stored) return stored;
  const durable = `${CONSUMERS.logs.durable}-${randomBytes(8).toString('hex')}`;
  view.setMeta(DURABLE_KEY, durable);
  return durable;
}

/** Consumes EXECUTIONS into the logs read model and serves LogsService over gRPC. */
export async function startLogsService(options: LogsServiceOptions): Promise<LogsServiceHandle> {
  const { bus, dbPath, log } = options;
  if (dbPath !== ':memory:') mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
  const view = new LogsView(dbPath, options);
  const server = createGrpcServer();
  let consumer: Consumer | undefined;
  try {
    await ensureTopology(bus);
    const durable = durableOf(view);
    consumer = await bus.consume({ ...CONSUMERS.logs, durable, deliverPolicy: 'all' }, createRecorder(view, log));
    addService(server, LogsService, logsGrpcImpl(view), log);
    const port = await startServer(server, options.address);
    const address = `${options.address.slice(0, options.address.lastIndexOf(':'))}:${port}`;
    log.info('logs service listening', { address, durable, size: view.size() });
    return {
      address,
      view,
      durable,
      async stop() {
        // Consumer first: in-flight batches commit and ack before the database closes.
        await consumer?.stop();
        await stopServer(server);
        view.close();
      },
    };
  } catch (error) {
    await consumer?.stop().catch(() => undefined);
    server.forceShutdown();
    view.close();
    throw error;
  }
}
