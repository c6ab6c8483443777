import type { Clock } from '../../shared/clock.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import type { Logger } from '../../shared/log.ts';
import { consumeExecutions } from './executionConsumer.ts';
import { jobsGrpcImpl } from './grpcServer.ts';
import { createJobsService } from './jobsService.ts';
import { JobsView } from './jobsView.ts';
import { sealingStore } from './sealingStore.ts';
import type { Sealer } from '../../shared/job/secretSettings.ts';

/** Builds the jobs view from the store, then serves JobsService over gRPC at `address` (port 0: any). */
/** With a bus, it also consumes execution outcomes (failure counting). */
/** With `secrets`, job secrets are sealed in the store (every deployment passes it; some tests do not need it). */
export async function startJobsServer(options: { store: EventStore; clock: Clock; log: Logger; address: string; bus?: Bus; accountJobLimit?: number; secrets?: Sealer }) {
  const { clock, log } = options;
  const store = options.secrets ? sealingStore(options.store, options.secrets) : options.store;
  const view = new JobsView();
  const started = Date.now();
  await view.start(store, (error) => log.error('jobs view subscription failed', { error }));
  log.info('jobs view rebuilt', { ms: Date.now() - started });
  const service = createJobsService(store, view, clock);
  const consumer = options.bus ? await consumeExecutions(options.bus, service, log) : null;
  const server = createGrpcServer();
  addService(server, JobsService, jobsGrpcImpl(service, clock, options.accountJobLimit), log);
  const port = await startServer(server, options.address);
  const host = options.address.slice(0, options.address.lastIndexOf(':'));
  log.info('jobs service listening', { address: `${host}:${port}` });
  return {
    address: `${host}:${port}`,
    service,
    view,
    async stop() {
      await consumer?.stop();
      await stopServer(server);
      await view.stop();
    },
  };
}
