import { systemClock, type Clock } from '../../shared/clock.ts';
import type { Config } from '../../shared/config.ts';
import { openStore } from '../../shared/openStore.ts';
import { JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { createLogger, type Logger } from '../../shared/log.ts';
import { startGatewayServer } from '../gateway/server.ts';
import { startJobsServer } from '../jobs/server.ts';
import { bootstrapFirstAccount } from './bootstrap.ts';

export interface EmbeddedOptions {
  config: Config;
  clock?: Clock;
  log?: Logger;
  /** Where the first-start token is printed (stdout by default). */
  print?: (line: string) => void;
}

/**
 * Every service in one process: SQLite event store under DATA_DIR, in-process bus, and the
 * services talking real gRPC over loopback, exactly as they do when deployed apart.
 */
export async function startEmbedded(options: EmbeddedOptions) {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger('tock', {}, config.LOG_LEVEL);
  const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
  const store = openStore({ DATA_DIR: config.DATA_DIR, ESDB_URL: undefined });
  const jobs = await startJobsServer({ store, clock, log: log.child({ component: 'jobs' }), address: '127.0.0.1:0' });
  const jobsClient = createClient(JobsService, jobs.address);
  const token = await bootstrapFirstAccount(jobsClient, { token: config.TOCK_BOOTSTRAP_TOKEN, timezone: config.TOCK_DEFAULT_TIMEZONE }, print);
  const gateway = await startGatewayServer({
    clients: { jobs: jobsClient },
    rateLimit: config.TOCK_RATE_LIMIT,
    log: log.child({ component: 'gateway' }),
    host: config.HOST,
    port: config.PORT,
  });
  return {
    port: gateway.port,
    /** The token of a freshly created first account, or null when the store already had one. */
    bootstrapToken: token,
    jobs,
    jobsClient,
    store,
    async stop() {
      await gateway.stop();
      jobsClient.close();
      await jobs.stop();
      await store.close();
    },
  };
}
