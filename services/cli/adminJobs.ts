import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit } from '../../shared/config.ts';
import { AdminService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient, type ServiceClient } from '../../shared/grpc/bridge.ts';
import { grpcCredentialsOrExit, loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { eventStoreUrl, openStore } from '../../shared/openStore.ts';
import { secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyringOrExit } from '../../shared/crypto/loadKeyring.ts';
import { startJobsService } from '../jobs/service.ts';

export type AdminJobs = ServiceClient<(typeof AdminService)['method']>;

/**
 * Runs `fn` with an admin client: the running admin service at ADMIN_ADDR when set (with
 * TOCK_ADMIN_TOKEN and, for mutual TLS, TOCK_GRPC_TLS_*), otherwise a jobs service served
 * in-process over the configured event store (no running Tock needed).
 */
export async function withAdminJobs(env: NodeJS.ProcessEnv, fn: (admin: AdminJobs) => Promise<void>): Promise<void> {
  const config = loadConfigOrExit(env);
  const log = createLogger('cli', {}, 'warn');
  if (config.ADMIN_ADDR) {
    const admin = createClient(AdminService, config.ADMIN_ADDR, grpcCredentialsOrExit(config, 'admin', log));
    try {
      return await fn(admin);
    } finally {
      admin.close();
    }
  }
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
  const admin = createClient(AdminService, server.addresses.admin, credentials.admin);
  try {
    return await fn(admin);
  } finally {
    admin.close();
    await server.stop();
    await store.close();
  }
}
