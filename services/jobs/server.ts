import type { Clock } from '../../shared/clock.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { AdminService, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import type { Logger } from '../../shared/log.ts';
import { consumeExecutions } from './executionConsumer.ts';
import { adminGrpcImpl, jobsGrpcImpl } from './grpcServer.ts';
import { createJobsService } from './jobsService.ts';
import { JobsView } from './jobsView.ts';

export interface StartJobsOptions {
  store: EventStore;
  clock: Clock;
  log: Logger;
  /** host:port of JobsService (port 0: any). */
  address: string;
  /** Who may call JobsService (none: anyone who reaches it; only for tests and an explicit insecure flag). */
  credentials?: GrpcCredentials;
  /**
   * AdminService (accounts, tokens) on a server of its own, so that the gateway's credential,
   * good for JobsService, opens nothing there. Absent: no admin calls are served.
   */
  admin?: { address: string; credentials: GrpcCredentials };
  /** With a bus, it also consumes execution outcomes (failure counting). */
  bus?: Bus;
  /** The job limit of an account created without one. */
  accountJobLimit?: number;
}

const hostOf = (address: string) => address.slice(0, address.lastIndexOf(':'));

/** Builds the jobs view from the store, then serves JobsService (and AdminService) over gRPC. */
export async function startJobsServer(options: StartJobsOptions) {
  const { store, clock, log } = options;
  const view = new JobsView();
  const started = Date.now();
  await view.start(store, (error) => log.error('jobs view subscription failed', { error }));
  log.info('jobs view rebuilt', { ms: Date.now() - started });
  const service = createJobsService(store, view, clock);
  const consumer = options.bus ? await consumeExecutions(options.bus, service, log) : null;
  const servers: ReturnType<typeof createGrpcServer>[] = [];
  const stopAll = async () => {
    await consumer?.stop();
    for (const s of servers) await stopServer(s);
    await view.stop();
  };
  try {
    let adminAddress: string | null = null;
    if (options.admin) {
      const admin = createGrpcServer(options.admin.credentials);
      servers.push(admin);
      addService(admin, AdminService, adminGrpcImpl(service, options.accountJobLimit), log);
      adminAddress = `${hostOf(options.admin.address)}:${await startServer(admin, options.admin.address, options.admin.credentials)}`;
      log.info('admin service listening', { address: adminAddress });
    }
    const server = createGrpcServer(options.credentials ?? {});
    servers.push(server);
    addService(server, JobsService, jobsGrpcImpl(service, clock), log);
    const address = `${hostOf(options.address)}:${await startServer(server, options.address, options.credentials ?? {})}`;
    log.info('jobs service listening', { address });
    return { address, adminAddress, service, view, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
