import { measuredBus } from '../../shared/bus/measuredBus.ts';
import { natsAuthOrExit } from '../../shared/bus/natsAuth.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { createReadiness } from '../../shared/readiness.ts';
import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit, opsHost, smtpSettings } from '../../shared/config.ts';
import { ACTION_LINK_KEYS, deriveKeys } from '../../shared/crypto/derive.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { grpcCredentialsOrExit } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { collectProcessMetrics, renderMetrics } from '../../shared/metrics.ts';
import { startOpsServer } from '../../shared/opsServer.ts';
import { migrateStoreOrExit, openStore } from '../../shared/openStore.ts';
import { watchStore } from '../../shared/eventStore/watchStore.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { startNotifierService } from './service.ts';

// Distributed mode: the notifier on its own (any number of replicas), executions from NATS.
const config = loadConfigOrExit();
const log = createLogger('notifier', {}, config.LOG_LEVEL);
if (!config.NATS_URL) {
  process.stderr.write('config error: NATS_URL: required to run the notifier on its own (e.g. nats://127.0.0.1:4222)\n');
  process.exit(1);
}
// Refuses to start without a key: channel URLs, bot tokens and signing secrets are sealed at rest.
const keyring = loadKeyringOrExit(config, { service: 'notifier' });
const secrets = secretBox(keyring);
const credentials = grpcCredentialsOrExit(config, 'service', log);
const readiness = createReadiness(log);
const bus = await connectNatsBus(config.NATS_URL, { name: 'tock-notifier', readiness, log, auth: natsAuthOrExit(config, 'notifier') }).then(measuredBus, (error: unknown) => {
  process.stderr.write(`notifier: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
await migrateStoreOrExit(config, log);
const store = await openStore(config);
// Deliveries are claimed and recorded in the store: unready while it refuses writes.
const unwatchStore = watchStore(store, readiness);
const notifier = await startNotifierService({
  readiness,
  store,
  secrets,
  bus,
  clock: systemClock,
  log,
  address: `${config.GRPC_HOST}:${config.NOTIFIER_GRPC_PORT}`,
  credentials,
  allowNetworks: config.TOCK_ALLOW_NETWORKS,
  smtp: smtpSettings(config),
  publicUrl: config.TOCK_PUBLIC_URL,
  linkKeys: deriveKeys(keyring, ACTION_LINK_KEYS),
  telegramApi: config.TOCK_TELEGRAM_API,
  windowMs: config.TOCK_NOTIFY_WINDOW_MS,
  retry: { baseMs: config.TOCK_NOTIFY_RETRY_MS, maxMs: 15 * 60_000 },
}).catch(async (error: unknown) => {
  log.error('notifier failed to start', { error });
  await bus.close().catch(() => undefined);
  process.exit(1);
});
collectProcessMetrics();
const ops = await startOpsServer({ host: opsHost(config, 'distributed'), port: config.OPS_PORT, ready: () => readiness.ready(), metrics: () => renderMetrics(), log });
onShutdown(log, async () => {
  await ops.stop();
  await notifier.stop();
  unwatchStore();
  await bus.close();
  await store.close();
});
