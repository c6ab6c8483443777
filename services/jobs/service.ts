import type { Clock } from '../../shared/clock.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { AdminService, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import { gated } from '../../shared/grpc/gate.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { addHealthService } from '../../shared/grpc/health.ts';
import type { Logger } from '../../shared/log.ts';
import { createReadiness, type Readiness } from '../../shared/readiness.ts';
import { boundAddress, type ServiceHandle } from '../../shared/service.ts';
import { consumeExecutions } from './executionConsumer.ts';
import { adminGrpcImpl, jobsGrpcImpl } from './grpcServer.ts';
import { createJobsService } from './jobsService.ts';
import { JobsView } from './jobsView.ts';
import { jobSealings } from './jobSealings.ts';
import { createTestRuns } from './testRuns.ts';
import { sealingStore } from '../../shared/eventStore/sealingStore.ts';
import type { Sealer } from '../../shared/job/index.ts';

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
   * good for JobsService, opens nothing there.
   */
  admin: { address: string; credentials: GrpcCredentials };
  /** With a bus, it also consumes execution outcomes (failure counting). */
  bus?: Bus;
  /** The process's readiness, served by the gRPC health service; a new one when absent. */
  readiness?: Readiness;
  /** The job limit of an account created without one. */
  accountJobLimit?: number;
  /** Seals job secrets in the store and opens them on read (every deployment passes it; some tests do not need it). */
  secrets?: Sealer;
}

/** The jobs service's inner pieces, for tests and the CLI. */
export interface JobsParts {
  /** The job, account and group commands and queries the gRPC edges call. */
  useCases: ReturnType<typeof createJobsService>;
  view: JobsView;
}

/**
 * Serves JobsService (and AdminService) with the gRPC health service, then builds the jobs view
 * from the store; resolves once it is caught up. Until then, and whenever the view has lost the
 * store, calls answer UNAVAILABLE and health says NOT_SERVING.
 */
export async function startJobsService(options: StartJobsOptions): Promise<ServiceHandle<JobsParts, 'grpc' | 'admin'>> {
  const { clock, log } = options;
  const store = options.secrets ? sealingStore(options.store, jobSealings(options.secrets), { openSubscriptions: true }) : options.store;
  const readiness = options.readiness ?? createReadiness(log);
  const view = new JobsView();
  const useCases = createJobsService(store, view, clock);
  const tests = createTestRuns({ bus: options.bus, secrets: options.secrets, useCases, clock, log });
  const catchingUp = () => (view.live ? null : 'the jobs view is catching up with the event store');
  const servers: ReturnType<typeof createGrpcServer>[] = [];
  const unwatch: (() => void)[] = [];
  let consumer: Awaited<ReturnType<typeof consumeExecutions>> | null = null;
  const stopAll = async () => {
    await consumer?.stop();
    await tests.stop();
    for (const u of unwatch) u();
    for (const s of servers) await stopServer(s);
    await view.stop();
  };
  try {
    const admin = createGrpcServer(options.admin.credentials);
    servers.push(admin);
    addService(admin, AdminService, gated(adminGrpcImpl(useCases, clock, options.accountJobLimit), catchingUp), log);
    const adminAddress = boundAddress(options.admin.address, await startServer(admin, options.admin.address, options.admin.credentials));
    log.info('admin service listening', { address: adminAddress });
    const server = createGrpcServer(options.credentials ?? {});
    servers.push(server);
    addService(server, JobsService, gated(jobsGrpcImpl(useCases, clock, tests), catchingUp), log);
    unwatch.push(addHealthService(server, readiness, [JobsService.typeName]));
    const address = boundAddress(options.address, await startServer(server, options.address, options.credentials ?? {}));
    const started = Date.now();
    await view.start(store, { log, readiness });
    log.info('jobs view rebuilt', { ms: Date.now() - started });
    log.info('jobs service listening', { address });
    consumer = options.bus ? await consumeExecutions(options.bus, useCases, log) : null;
    await tests.start();
    return { addresses: { grpc: address, admin: adminAddress }, useCases, view, readiness, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
