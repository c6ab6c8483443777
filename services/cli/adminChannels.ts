import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit, smtpSettings } from '../../shared/config.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { grpcCredentialsOrExit, loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { eventStoreUrl, openStore } from '../../shared/openStore.ts';
import { startChannelsService } from '../notifier/service.ts';
import { channelsCommand } from './channelsCommand.ts';
import type { Io } from './io.ts';

/**
 * `tock channels ...` with a notifier client: the running service at NOTIFIER_ADDR when set,
 * otherwise the channels service served in-process over the configured event store.
 */
export async function adminChannels(args: string[], io: Io): Promise<number> {
  const config = loadConfigOrExit(io.env);
  const log = createLogger('cli', {}, 'warn');
  if (config.NOTIFIER_ADDR) {
    const notifier = createClient(NotifierService, config.NOTIFIER_ADDR, grpcCredentialsOrExit(config, 'service', log));
    try {
      return await channelsCommand(args, notifier, io.out, io.err);
    } finally {
      notifier.close();
    }
  }
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
  const notifier = createClient(NotifierService, server.addresses.grpc, credentials);
  try {
    return await channelsCommand(args, notifier, io.out, io.err);
  } finally {
    notifier.close();
    await server.stop();
    await store.close();
  }
}
