import { loadConfigOrExit } from '../../shared/config.ts';
import { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { grpcCredentialsOrExit } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { channelsCommand } from './channelsCommand.ts';
import type { Io } from './io.ts';

/**
 * `tock channels ...` with a notifier client: the running service at NOTIFIER_ADDR when set,
 * otherwise the channels service served in-process over the configured event store.
 */
export async function adminChannels(args: string[], io: Io): Promise<number> {
  const config = loadConfigOrExit(io.env);
  const log = createLogger('cli', {}, 'warn');
  const run = async (address: string, credentials: GrpcCredentials) => {
    const notifier = createClient(NotifierService, address, credentials);
    try {
      return await channelsCommand(args, notifier, io.out, io.err);
    } finally {
      notifier.close();
    }
  };
  if (config.NOTIFIER_ADDR) return run(config.NOTIFIER_ADDR, grpcCredentialsOrExit(config, 'service', log));
  // Imported only here: a CLI that talks to a running notifier loads no store, key or notifier.
  const served = await (await import('./inProcessChannels.ts')).serveChannelsInProcess(config, log);
  try {
    return await run(served.address, served.credentials);
  } finally {
    await served.stop();
  }
}
