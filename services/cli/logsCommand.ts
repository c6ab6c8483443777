import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, apiFrom } from './apiClient.ts';
import { idOf, parse, UsageError } from './args.ts';
import type { Io } from './io.ts';
import { instant, resultStatus } from './output.ts';

export const LOGS_USAGE = `usage:
  tock logs <job id> [--limit N] [--failures] [--json]
  tock logs <job id> --follow [--interval SECONDS] [--failures] [--json]
Results oldest first: scheduled time, outcome, HTTP status, seconds taken, error. --follow keeps
printing new results until interrupted (Ctrl-C). --json prints one result object per line.
Connection: --url (TOCK_URL, default http://127.0.0.1:8080) and --token (TOCK_TOKEN).`;

export interface LogResult {
  id: number;
  time: number;
  status: number;
  httpStatus: number;
  executionTime: number;
  error: string;
  [field: string]: unknown;
}

const OPTIONS = {
  limit: { type: 'string' },
  failures: { type: 'boolean' },
  follow: { type: 'boolean', short: 'f' },
  interval: { type: 'string' },
} as const;

const RATE_LIMITED = 12;

/** `tock logs <job>`: a job's execution results (cron_logs / cron_failures), optionally followed. */
export async function logsCommand(args: string[], io: Io, stop: AbortSignal): Promise<number> {
  const parsed = parse(args, OPTIONS, LOGS_USAGE);
  const id = idOf(parsed, 'a job', LOGS_USAGE);
  const { values } = parsed;
  const limit = Number(values.limit ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError(`--limit must be a whole number from 1 to 1000, got '${String(values.limit)}'`, LOGS_USAGE);
  const interval = Number(values.interval ?? 2);
  if (!(interval >= 1 && interval <= 3600)) throw new UsageError(`--interval must be from 1 to 3600 seconds, got '${String(values.interval)}'`, LOGS_USAGE);
  const api = apiFrom(parsed, io.env, LOGS_USAGE);
  const fn = values.failures ? 'cron_failures' : 'cron_logs';
  const print = (r: LogResult) => {
    if (values.json) io.out(JSON.stringify(r));
    else io.out([instant(r.time), resultStatus(r.status), r.httpStatus || '-', `${r.executionTime.toFixed(3)}s`, r.error].join('\t').trimEnd());
  };
  // Newest first from the API; ids grow, so the last id printed marks where to go on from.
  const fetch = async (n: number) => (await api<{ result: LogResult }[]>(fn, { id, limit: String(n) })).map((e) => e.result).reverse();

  let last = 0;
  for (const r of await fetch(limit)) {
    print(r);
    last = Math.max(last, r.id);
  }
  if (!values.follow) return 0;
  while (!stop.aborted) {
    try {
      await sleep(interval * 1000, undefined, { signal: stop });
    } catch {
      break;
    }
    try {
      for (const r of await fetch(1000)) {
        if (r.id <= last) continue;
        print(r);
        last = r.id;
      }
    } catch (error) {
      // The default limit is one request per second per token: a busy moment is not the end.
      if (!(error instanceof ApiError && error.code === RATE_LIMITED)) throw error;
    }
  }
  return 0;
}
