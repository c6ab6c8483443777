import { parseArgs } from 'node:util';
import type { AdminService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import type { ServiceClient } from '../../shared/grpc/bridge.ts';

type Admin = ServiceClient<(typeof AdminService)['method']>;

const USAGE = `usage:
  tock account create [--name NAME] [--timezone ZONE] [--token TOKEN] [--limit N (0: none; default: the server's TOCK_ACCOUNT_JOB_LIMIT)]
  tock account list
  tock account rotate <id>
  tock account disable <id>`;

/** Operator commands on accounts. Tokens are printed once: only their hash is stored. */
export async function accountCommand(args: string[], admin: Admin, out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { name: { type: 'string' }, timezone: { type: 'string' }, token: { type: 'string' }, limit: { type: 'string' } },
    });
  } catch (error) {
    err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const idArg = () => {
    const id = Number(positionals[0]);
    if (!Number.isInteger(id) || id <= 0) throw new Error(`an account id is required\n${USAGE}`);
    return BigInt(id);
  };
  switch (verb) {
    case 'create': {
      // Without --limit the jobs service applies its default (TOCK_ACCOUNT_JOB_LIMIT).
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw new Error('--limit must be a whole number (0: no limit)');
      const { account, token } = await admin.createAccount({ name: values.name ?? '', timezone: values.timezone ?? 'UTC', token: values.token, jobLimit: limit });
      out(`account ${account!.id} (${account!.name}) created`);
      out(`token: ${token}`);
      return 0;
    }
    case 'list': {
      const { accounts } = await admin.listAccounts({});
      out(['id', 'name', 'timezone', 'job limit', 'status'].join('\t'));
      for (const a of accounts) out([a.id, a.name, a.timezone, a.jobLimit || 'none', a.disabled ? 'disabled' : 'active'].join('\t'));
      return 0;
    }
    case 'rotate': {
      const { account, token } = await admin.rotateToken({ id: idArg() });
      out(`account ${account!.id}: new token: ${token} (the old one no longer works)`);
      return 0;
    }
    case 'disable': {
      const account = await admin.disableAccount({ id: idArg() });
      out(`account ${account.id} disabled`);
      return 0;
    }
    default:
      err(USAGE);
      return 2;
  }
}
