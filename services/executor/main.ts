import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit } from '../../shared/config.ts';
import { connectNatsLeases } from '../../shared/leases/natsLeases.ts';
import { createLogger } from '../../shared/log.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { startExecutorService } from './server.ts';

const config = loadConfigOrExit();
const log = createLogger('executor', {}, config.LOG_LEVEL);
if (!config.NATS_URL) {
  process.stderr.write('config error: NATS_URL: an executor on its own needs NATS (npm start runs everything embedded instead)\n');
  process.exit(1);
}
// Refuses to start without a key: due runs carry job secrets sealed, and only executors open them.
const secrets = secretBox(loadKeyringOrExit(config, { service: 'executor' }));
const bus = await connectNatsBus(config.NATS_URL, { name: 'tock-executor' });
const leases = await connectNatsLeases(config.NATS_URL);
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
});
onShutdown(log, async () => {
  await executor.stop();
  await leases.close();
  await bus.close();
});
