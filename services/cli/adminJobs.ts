import { loadConfigOrExit } from '../../shared/config.ts';
import { AdminService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient, type ServiceClient } from '../../shared/grpc/bridge.ts';
import { grpcCredentialsOrExit } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';

export type AdminJobs = ServiceClient<(typeof AdminService)['method']>;

/**
 * Runs `fn` with an admin client: the running admin service at ADMIN_ADDR when set (with
 * TOCK_ADMIN_TOKEN and, for mutual TLS, TOCK_GRPC_TLS_*), otherwise a jobs service served
 * in-process over the configured event store (no running Tock needed).
 */
export async function withAdminJobs(env: NodeJS.ProcessEnv, fn: (admin: AdminJobs) => Promise<void>): Promise<void> {
  const config = loadConfigOrExit(env);
  const log = createLogger('cli', {}, 'warn');
  if (config.ADMIN_ADDR) return withClient(createClient(AdminService, config.ADMIN_ADDR, grpcCredentialsOrExit(config, 'admin', log)), fn);
  // Imported only here: a CLI that talks to a running admin service loads no store, key or jobs service.
  const served = await (await import('./inProcessJobs.ts')).serveAdminInProcess(config, log);
  try {
    return await withClient(createClient(AdminService, served.address, served.credentials), fn);
  } finally {
    await served.stop();
  }
}

async function withClient(admin: AdminJobs, fn: (admin: AdminJobs) => Promise<void>): Promise<void> {
  try {
    return await fn(admin);
  } finally {
    admin.close();
  }
}
