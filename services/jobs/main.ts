import { systemClock } from '../../shared/clock.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { loadConfigOrExit } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { startJobsServer } from './server.ts';

const config = loadConfigOrExit();
const log = createLogger('jobs', {}, config.LOG_LEVEL);
// Refuses to start without a key: the jobs service seals job secrets before they are stored.
const secrets = secretBox(loadKeyringOrExit(config, { service: 'jobs' }));
const store = openStore(config);
// Without a bus the service still serves every command; it just cannot count execution outcomes.
const bus = config.NATS_URL ? await connectNatsBus(config.NATS_URL, { name: 'tock-jobs' }) : undefined;
if (bus) await ensureTopology(bus);
else log.warn('NATS_URL is not set: execution outcomes will not be counted');
const server = await startJobsServer({ store, bus, clock: systemClock, log, address: `${config.GRPC_HOST}:${config.JOBS_GRPC_PORT}`, accountJobLimit: config.TOCK_ACCOUNT_JOB_LIMIT, secrets });
onShutdown(log, async () => {
  await server.stop();
  await bus?.close();
  await store.close();
});
