import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { startJobsServer } from './server.ts';

const config = loadConfigOrExit();
const log = createLogger('jobs', {}, config.LOG_LEVEL);
const store = openStore(config);
const server = await startJobsServer({ store, clock: systemClock, log, address: `${config.GRPC_HOST}:${config.JOBS_GRPC_PORT}` });
onShutdown(log, async () => {
  await server.stop();
  await store.close();
});
