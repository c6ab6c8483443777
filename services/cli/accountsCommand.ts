import { idOf, noPositionals, parse, UsageError } from './args.ts';
import type { Io } from './io.ts';
import { json, table } from './output.ts';

export const ACCOUNTS_USAGE = `usage:
  tock accounts create [--name NAME] [--timezone ZONE] [--token TOKEN] [--limit N] [--json]
      --limit: jobs the account may have (0: none; default: the server's TOCK_ACCOUNT_JOB_LIMIT)
  tock accounts list [--json]
  tock accounts rotate <id> [--json]
  tock accounts secret-rotate <id> [--json]
  tock accounts disable <id>         its token is refused and its jobs stop
  tock accounts enable <id>          both again; its jobs run from their next occurrence
  tock accounts jobs <id> [--json]   the account's cron jobs (URL credentials and headers masked)
  tock accounts delete-jobs <id>     deletes every cron job of the account
An operator's commands. They go to the admin service at ADMIN_ADDR when it is set (with
TOCK_ADMIN_TOKEN and, for mutual TLS, TOCK_GRPC_TLS_*), otherwise straight to the event store of
DATA_DIR (or EVENTSTORE_URL), next to a running Tock.
Tokens are printed once: only their hash is stored. A signing secret (X-Tock-Signature of job
requests) is printed when the account is created and by secret-rotate, nowhere else.`;

const STATUS_NAMES: Record<number, string> = { 0: 'active', 1: 'disabled', 4: 'auto-disabled', 5: 'paused', 6: 'done' };

const OPTIONS = { name: { type: 'string' }, timezone: { type: 'string' }, limit: { type: 'string' } } as const;

/** `tock accounts ...` (also `tock account ...`): accounts through the jobs service's gRPC API. */
export async function accountsCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, OPTIONS, ACCOUNTS_USAGE);
  const verb = parsed.positionals.shift();
  const { values } = parsed;
  const asJson = values.json === true;
  let run: (jobs: import('./adminJobs.ts').AdminJobs) => Promise<void>;
  switch (verb) {
    case 'create': {
      noPositionals(parsed, ACCOUNTS_USAGE);
      // Without --limit the jobs service applies its default (TOCK_ACCOUNT_JOB_LIMIT).
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw new UsageError(`--limit must be a whole number (0: no limit), got '${String(values.limit)}'`, ACCOUNTS_USAGE);
      run = async (jobs) => {
        const { account, token, signingSecret } = await jobs.createAccount({ name: (values.name as string) ?? '', timezone: (values.timezone as string) ?? 'UTC', token: values.token as string | undefined, jobLimit: limit });
        if (asJson) return json(io.out, { id: Number(account!.id), name: account!.name, timezone: account!.timezone, jobLimit: account!.jobLimit, token, signingSecret });
        io.out(`account ${account!.id} (${account!.name}) created`);
        io.out(`token: ${token}`);
        io.out(`signing secret: ${signingSecret}`);
      };
      break;
    }
    case 'list':
      noPositionals(parsed, ACCOUNTS_USAGE);
      run = async (jobs) => {
        const { accounts } = await jobs.listAccounts({});
        if (asJson) return json(io.out, accounts.map((a) => ({ id: Number(a.id), name: a.name, timezone: a.timezone, jobLimit: a.jobLimit, disabled: a.disabled })));
        table(io.out, ['id', 'name', 'timezone', 'job limit', 'status'], accounts.map((a) => [a.id, a.name, a.timezone, a.jobLimit || 'none', a.disabled ? 'disabled' : 'active']));
      };
      break;
    case 'rotate': {
      const id = BigInt(idOf(parsed, 'an account', ACCOUNTS_USAGE));
      run = async (jobs) => {
        const { account, token } = await jobs.rotateToken({ id });
        if (asJson) return json(io.out, { id: Number(account!.id), token });
        io.out(`account ${account!.id}: new token: ${token} (the old one no longer works)`);
      };
      break;
    }
    case 'secret-rotate': {
      const id = BigInt(idOf(parsed, 'an account', ACCOUNTS_USAGE));
      run = async (jobs) => {
        const { account, signingSecret, previousValidUntil } = await jobs.rotateSigningSecret({ id });
        const until = previousValidUntil > 0n ? new Date(Number(previousValidUntil)).toISOString() : null;
        if (asJson) return json(io.out, { id: Number(account!.id), signingSecret, previousValidUntil: until });
        io.out(`account ${account!.id}: new signing secret: ${signingSecret}`);
        if (until) io.out(`the previous one also signs until ${until}`);
      };
      break;
    }
    case 'disable': {
      const id = BigInt(idOf(parsed, 'an account', ACCOUNTS_USAGE));
      run = async (jobs) => {
        const account = await jobs.disableAccount({ id });
        io.out(`account ${account.id} disabled: its token is refused and its jobs do not run`);
      };
      break;
    }
    case 'enable': {
      const id = BigInt(idOf(parsed, 'an account', ACCOUNTS_USAGE));
      run = async (jobs) => {
        const account = await jobs.enableAccount({ id });
        io.out(`account ${account.id} enabled: its token works and its jobs run from their next occurrence`);
      };
      break;
    }
    case 'jobs': {
      const accountId = BigInt(idOf(parsed, 'an account', ACCOUNTS_USAGE));
      run = async (jobs) => {
        const list = [];
        // The jobs service answers at most 1000 per page.
        for (let page = 1; ; page++) {
          const { jobs: batch } = await jobs.listAccountJobs({ accountId, page, limit: 1000, keyword: '' });
          list.push(...batch);
          if (batch.length < 1000) break;
        }
        if (asJson) return json(io.out, list.map((j) => ({ id: Number(j.id), name: j.name, status: j.status, expression: j.expression, url: j.url })));
        table(io.out, ['id', 'name', 'status', 'expression', 'url'], list.map((j) => [j.id, j.name, STATUS_NAMES[j.status] ?? String(j.status), j.expression, j.url]));
      };
      break;
    }
    case 'delete-jobs': {
      const id = BigInt(idOf(parsed, 'an account', ACCOUNTS_USAGE));
      run = async (jobs) => {
        const { deleted } = await jobs.deleteAccountJobs({ id });
        io.out(`account ${id}: ${deleted} cron job(s) deleted`);
      };
      break;
    }
    case undefined:
      throw new UsageError('an accounts command is required', ACCOUNTS_USAGE);
    default:
      throw new UsageError(`unknown accounts command '${verb}'`, ACCOUNTS_USAGE);
  }
  // Loaded only now: the store and gRPC modules are what makes a command slow to start.
  const { withAdminJobs } = await import('./adminJobs.ts');
  await withAdminJobs(io.env, run);
  return 0;
}
