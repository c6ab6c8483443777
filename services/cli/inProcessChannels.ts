import { systemClock } from '../../shared/clock.ts';
import { smtpSettings, type Config } from '../../shared/config.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import type { Logger } from '../../shared/log.ts';
import { eventStoreUrl, openStore } from '../../shared/openStore.ts';
import { startChannelsService } from '../notifier/service.ts';
import type { InProcessService } from './inProcessJobs.ts';

/** The notifier's channel functions over the configured event store, for the CLI when no notifier runs. */
export async function serveChannelsInProcess(config: Config, log: Logger): Promise<InProcessService> {
  // Channels added here are sealed with the key the notifier uses (embedded mode's own in DATA_DIR).
  const secrets = secretBox(loadKeyringOrExit(config, { generateIn: eventStoreUrl(config) ? undefined : config.DATA_DIR, service: 'notifier' }));
  const store = await openStore(config);
  const { service: credentials } = loopbackCredentials();
  const server = await startChannelsService({
    store,
    secrets,
    clock: systemClock,
    log,
    address: '127.0.0.1:0',
    credentials,
    allowNetworks: config.TOCK_ALLOW_NETWORKS,
    smtp: smtpSettings(config),
    publicUrl: config.TOCK_PUBLIC_URL,
    telegramApi: config.TOCK_TELEGRAM_API,
  });
  return {
    address: server.addresses.grpc,
    credentials,
    async stop() {
      await server.stop();
      await store.close();
    },
  };
}
