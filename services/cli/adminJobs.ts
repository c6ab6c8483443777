import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit } from '../../shared/config.ts';
import { JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient, type ServiceClient } from '../../shared/grpc/bridge.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { startJobsServer } from '../jobs/server.ts';

export type AdminJobs = ServiceClient<(typeof JobsService)['method']>;

/**
 * Runs `fn` with a jobs service client: the running service at JOBS_ADDR when set, otherwise a
 * jobs service served in-process over the configured event store (no running Tock needed).
 */
export async function withAdminJobs(env: NodeJS.ProcessEnv, fn: (jobs: AdminJobs) => Promise<void>): Promise<void> {
  const config = loadConfigOrExit(env);
  if (config.JOBS_ADDR) {
    const jobs = createClient(JobsService, config.JOBS_ADDR);
    try {
      return await fn(jobs);
    } finally {
      jobs.close();
    }
  }
  const store = openStore(config);
  const server = await startJobsServer({ store, clock: systemClock, log: createLogger('cli', {}, 'warn'), address: '127.0.0.1:0' });
  const jobs = createClient(JobsService, server.address);
  try {
    return await fn(jobs);
  } finally {
    jobs.close();
    await server.stop();
    await store.close();
  }
}
