import { measuredBus } from '../../shared/bus/measuredBus.ts';
import { natsAuthOrExit } from '../../shared/bus/natsAuth.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit, opsHost } from '../../shared/config.ts';
import { connectNatsLeases } from '../../shared/leases/natsLeases.ts';
import { createLogger } from '../../shared/log.ts';
import { collectProcessMetrics, renderMetrics } from '../../shared/metrics.ts';
import { startOpsServer } from '../../shared/opsServer.ts';
import { createReadiness } from '../../shared/readiness.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { startExecutorService } from './service.ts';

const config = loadConfigOrExit();
const log = createLogger('executor', {}, config.LOG_LEVEL);
if (!config.NATS_URL) {
  process.stderr.write('config error: NATS_URL: an executor on its own needs NATS (npm start runs everything embedded instead)\n');
  process.exit(1);
}
// Refuses to start without a key: due runs carry job secrets sealed, and only executors open them.
const secrets = secretBox(loadKeyringOrExit(config, { service: 'executor' }));
const auth = natsAuthOrExit(config, 'executor');
const readiness = createReadiness(log);
collectProcessMetrics();
// Up first, with the executor's condition declared: probes see "alive, not ready" while the
// connections are being made; the executor service makes it hold once it consumes.
const ops = await startOpsServer({ host: opsHost(config, 'distributed'), port: config.OPS_PORT, ready: () => readiness.ready(), metrics: () => renderMetrics(), log });
readiness.set('executor', false, 'starting');
const bus = measuredBus(await connectNatsBus(config.NATS_URL, { name: 'tock-executor', readiness, log, auth }));
const leases = await connectNatsLeases(config.NATS_URL, undefined, undefined, { readiness, log, auth });
const executor = await startExecutorService({
  bus,
  leases,
  clock: systemClock,
  log,
  allowNetworks: config.TOCK_ALLOW_NETWORKS,
  serverName: config.TOCK_SERVER_NAME,
  publicUrl: config.TOCK_PUBLIC_URL,
  accountConcurrency: config.TOCK_ACCOUNT_CONCURRENCY,
  secrets,
  readiness,
  drainMs: config.TOCK_EXECUTOR_DRAIN_SECONDS * 1000,
});
onShutdown(log, async () => {
  await executor.stop();
  await leases.close();
  await bus.close();
  await ops.stop();
});
