import type { Clock } from '../../shared/clock.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import { gated } from '../../shared/grpc/gate.ts';
import { addHealthService } from '../../shared/grpc/health.ts';
import type { Logger } from '../../shared/log.ts';
import { createReadiness, type Readiness } from '../../shared/readiness.ts';
import { consumeExecutions } from './executionConsumer.ts';
import { jobsGrpcImpl } from './grpcServer.ts';
import { createJobsService } from './jobsService.ts';
import { JobsView } from './jobsView.ts';

/**
 * Serves JobsService and the gRPC health service at `address` (port 0: any), then builds the jobs
 * view from the store; resolves once it is caught up. Until then, and whenever the view has lost
 * the store, calls answer UNAVAILABLE and health says NOT_SERVING. With a bus, it also consumes
 * execution outcomes (failure counting).
 */
export async function startJobsServer(options: { store: EventStore; clock: Clock; log: Logger; address: string; bus?: Bus; readiness?: Readiness; accountJobLimit?: number }) {
  const { store, clock, log } = options;
  const readiness = options.readiness ?? createReadiness(log);
  const view = new JobsView();
  const service = createJobsService(store, view, clock);
  const server = createGrpcServer();
  addService(server, JobsService, gated(jobsGrpcImpl(service, clock, options.accountJobLimit), () => (view.live ? null : 'the jobs view is catching up with the event store')), log);
  const unwatch = addHealthService(server, readiness, [JobsService.typeName]);
  const port = await startServer(server, options.address);
  const host = options.address.slice(0, options.address.lastIndexOf(':'));
  const started = Date.now();
  await view.start(store, { log, readiness });
  log.info('jobs view rebuilt', { ms: Date.now() - started });
  log.info('jobs service listening', { address: `${host}:${port}` });
  const consumer = options.bus ? await consumeExecutions(options.bus, service, log) : null;
  return {
    address: `${host}:${port}`,
    service,
    view,
    readiness,
    async stop() {
      await consumer?.stop();
      unwatch();
      await stopServer(server);
      await view.stop();
    },
  };
}
