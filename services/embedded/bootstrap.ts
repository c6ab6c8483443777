import type { AdminService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import type { ServiceClient } from '../../shared/grpc/bridge.ts';

/**
 * First start with an empty event store: create the first account and print its token once
 * (only its hash is stored, so it cannot be shown again; rotate it with the CLI if lost).
 */
export async function bootstrapFirstAccount(
  admin: ServiceClient<(typeof AdminService)['method']>,
  options: { token?: string; timezone: string },
  print: (line: string) => void,
) {
  const { accounts } = await admin.listAccounts({});
  if (accounts.length > 0) return null;
  const { account, token } = await admin.createAccount({ name: 'admin', timezone: options.timezone, token: options.token, jobLimit: 0 });
  print(`Created the first account (id ${account!.id}).`);
  if (!options.token) print(`Its API token, shown only this once: ${token}`);
  else print('Its API token is the one in TOCK_BOOTSTRAP_TOKEN.');
  return token;
}
