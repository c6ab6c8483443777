import { systemClock } from '../../shared/clock.ts';
import { measuredBus } from '../../shared/bus/measuredBus.ts';
import { natsAuthOrExit } from '../../shared/bus/natsAuth.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { loadConfigOrExit, opsHost } from '../../shared/config.ts';
import { grpcCredentialsOrExit } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { collectProcessMetrics, renderMetrics } from '../../shared/metrics.ts';
import { startOpsServer } from '../../shared/opsServer.ts';
import { watchStore } from '../../shared/eventStore/watchStore.ts';
import { migrateStoreOrExit, openStore } from '../../shared/openStore.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { createReadiness } from '../../shared/readiness.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { startJobsService } from './service.ts';

const config = loadConfigOrExit();
const log = createLogger('jobs', {}, config.LOG_LEVEL);
// Refuses to start without a key: the jobs service seals job secrets before they are stored.
const secrets = secretBox(loadKeyringOrExit(config, { service: 'jobs' }));
const credentials = grpcCredentialsOrExit(config, 'service', log);
const adminCredentials = grpcCredentialsOrExit(config, 'admin', log);
await migrateStoreOrExit(config, log);
const store = await openStore(config);
const readiness = createReadiness(log);
const unwatchStore = watchStore(store, readiness);
// Without a bus the service still serves every command; it just cannot count execution outcomes.
const bus = config.NATS_URL ? measuredBus(await connectNatsBus(config.NATS_URL, { name: 'tock-jobs', readiness, log, auth: natsAuthOrExit(config, 'jobs') })) : undefined;
if (bus) await ensureTopology(bus);
else log.warn('NATS_URL is not set: execution outcomes will not be counted');
collectProcessMetrics();
const ops = await startOpsServer({ host: opsHost(config, 'distributed'), port: config.OPS_PORT, ready: () => readiness.ready(), metrics: () => renderMetrics(), log });
const server = await startJobsService({
  store,
  bus,
  readiness,
  clock: systemClock,
  log,
  address: `${config.GRPC_HOST}:${config.JOBS_GRPC_PORT}`,
  credentials,
  admin: { address: `${config.GRPC_HOST}:${config.ADMIN_GRPC_PORT}`, credentials: adminCredentials },
  accountJobLimit: config.TOCK_ACCOUNT_JOB_LIMIT,
  secrets,
});
onShutdown(log, async () => {
  await ops.stop();
  await server.stop();
  unwatchStore();
  await bus?.close();
  await store.close();
});
