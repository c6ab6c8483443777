import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit } from '../../shared/config.ts';
import { AdminService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient, type ServiceClient } from '../../shared/grpc/bridge.ts';
import { grpcCredentialsOrExit, loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { startJobsServer } from '../jobs/server.ts';

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
  const store = openStore(config);
  const credentials = loopbackCredentials();
  const server = await startJobsServer({
    store,
    clock: systemClock,
    log,
    address: '127.0.0.1:0',
    credentials: credentials.service,
    admin: { address: '127.0.0.1:0', credentials: credentials.admin },
  });
  const admin = createClient(AdminService, server.adminAddress!, credentials.admin);
  try {
    return await fn(admin);
  } finally {
    admin.close();
    await server.stop();
    await store.close();
  }
}
