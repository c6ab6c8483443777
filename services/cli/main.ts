import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit, smtpSettings } from '../../shared/config.ts';
import { AdminService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { grpcCredentialsOrExit, loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { startJobsServer } from '../jobs/server.ts';
import { startChannelsServer } from '../notifier/server.ts';
import { accountCommand } from './accountCommand.ts';
import { channelsCommand } from './channelsCommand.ts';
import { nextCommand } from './nextCommand.ts';

const USAGE = `usage: tock <command>
  next '<expression>' [--filter F] [--tz ZONE] [--from ISO|unix] [--count N]   preview a schedule
  account create|list|rotate|disable ...                                        manage accounts
  channels list|add|edit|delete|test --account ID ...                           an account's notification channels
Accounts are managed through the admin service at ADMIN_ADDR when set (with TOCK_ADMIN_TOKEN and, for
mutual TLS, TOCK_GRPC_TLS_*), channels through NOTIFIER_ADDR, otherwise directly in DATA_DIR's event store.`;

const out = (line: string) => process.stdout.write(line + '\n');
const err = (line: string) => process.stderr.write(line + '\n');

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'next') return nextCommand(args, out, err);
  if (command !== 'account' && command !== 'channels') {
    err(USAGE);
    return 2;
  }
  const config = loadConfigOrExit();
  const log = createLogger('cli', {}, 'warn');
  if (command === 'channels') return channels(args, config, log);
  if (config.ADMIN_ADDR) {
    const admin = createClient(AdminService, config.ADMIN_ADDR, grpcCredentialsOrExit(config, 'admin', log));
    try {
      return await accountCommand(args, admin, out, err);
    } finally {
      admin.close();
    }
  }
  // No running service needed: serve the jobs service in-process over the same event store.
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
    return await accountCommand(args, admin, out, err);
  } finally {
    admin.close();
    await server.stop();
    await store.close();
  }
}

async function channels(args: string[], config: ReturnType<typeof loadConfigOrExit>, log: ReturnType<typeof createLogger>): Promise<number> {
  if (config.NOTIFIER_ADDR) {
    const notifier = createClient(NotifierService, config.NOTIFIER_ADDR, grpcCredentialsOrExit(config, 'service', log));
    try {
      return await channelsCommand(args, notifier, out, err);
    } finally {
      notifier.close();
    }
  }
  const store = openStore(config);
  const { service: credentials } = loopbackCredentials();
  const server = await startChannelsServer({
    store,
    clock: systemClock,
    log,
    address: '127.0.0.1:0',
    credentials,
    allowNetworks: config.TOCK_ALLOW_NETWORKS,
    smtp: smtpSettings(config),
    publicUrl: config.TOCK_PUBLIC_URL,
    telegramApi: config.TOCK_TELEGRAM_API,
  });
  const notifier = createClient(NotifierService, server.address, credentials);
  try {
    return await channelsCommand(args, notifier, out, err);
  } finally {
    notifier.close();
    await server.stop();
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    err(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
