import { systemClock } from '../../shared/clock.ts';
import type { Config } from '../../shared/config.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import type { Logger } from '../../shared/log.ts';
import { eventStoreUrl, openStore } from '../../shared/openStore.ts';
import { startJobsService } from '../jobs/service.ts';

/** A service the CLI serves itself on loopback, for as long as one command runs. */
export interface InProcessService {
  address: string;
  credentials: GrpcCredentials;
  stop(): Promise<void>;
}

/** The jobs service's admin API over the configured event store, for the CLI when no admin service runs. */
export async function serveAdminInProcess(config: Config, log: Logger): Promise<InProcessService> {
  // The same key as the server's (embedded mode's own in DATA_DIR), so what it writes is sealed alike.
  const secrets = secretBox(loadKeyringOrExit(config, { generateIn: eventStoreUrl(config) ? undefined : config.DATA_DIR, service: 'jobs' }));
  const store = await openStore(config);
  const credentials = loopbackCredentials();
  const server = await startJobsService({
    store,
    clock: systemClock,
    log,
    address: '127.0.0.1:0',
    credentials: credentials.service,
    admin: { address: '127.0.0.1:0', credentials: credentials.admin },
    secrets,
  });
  return {
    address: server.addresses.admin,
    credentials: credentials.admin,
    async stop() {
      await server.stop();
      await store.close();
    },
  };
}
