import type { Group, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import type { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import type { ServiceClient } from '../../shared/grpc/bridge.ts';
import { logRecord, resultStatus } from './records.ts';

/** Outcomes per job in `recentOutcomes`. */
export const RECENT_OUTCOMES = 20;
/** `lastResult`'s output and error are cut to this many characters: a list of 1000 jobs stays small (cron_logs has them whole). */
export const LAST_RESULT_TEXT = 200;
const DAY_S = 86_400;
const HOUR_S = 3600;
/** Hours in `hourly24h`: the current one and the 23 before it. */
export const HOURLY_HOURS = 24;

/** Tock's additions to the records of cron_list and cron_get (FastCron clients ignore fields they do not know). */
export interface JobHealth {
  lastResult: ReturnType<typeof logRecord>['result'] | null;
  /** API result statuses (0 succeeded, 1 failed, 2 skipped), newest first. */
  recentOutcomes: number[];
  runs24h: number;
  failures24h: number;
  /** Runs and failures per clock hour: the 24 hours from `from` (Unix seconds), the current one last. */
  hourly24h: { from: number; runs: number[]; failures: number[] };
  groupName: string | null;
}

/** The additions of a deleted job, or when the logs service could not answer. */
export const NO_HEALTH: { [K in keyof JobHealth]: null } = { lastResult: null, recentOutcomes: null, runs24h: null, failures24h: null, hourly24h: null, groupName: null };

const cut = (text: string) => (text.length > LAST_RESULT_TEXT ? text.slice(0, LAST_RESULT_TEXT) : text);

/** The first of the HOURLY_HOURS whole clock hours that end with the current one, so that every job's counts (and every answer's) line up hour for hour. */
const firstHour = (nowMs: number) => Math.floor(nowMs / 1000 / HOUR_S) * HOUR_S - (HOURLY_HOURS - 1) * HOUR_S;

type Clients = { jobs: ServiceClient<(typeof JobsService)['method']>; logs?: ServiceClient<(typeof LogsService)['method']> };

/** The account's group names by id, asked of the jobs service only when one of `jobs` is in a group. */
async function groupNames(clients: Clients, accountId: bigint, jobs: { group?: bigint }[]): Promise<Map<bigint, string>> {
  if (!jobs.some((j) => j.group)) return new Map();
  const groups = await clients.jobs.listGroups({ accountId }).then((r) => r.groups, () => [] as Group[]);
  return new Map(groups.map((g) => [g.id, g.name]));
}

function nameGroups(jobs: { id: bigint; group?: bigint }[], health: Map<bigint, JobHealth>, names: Map<bigint, string>) {
  for (const j of jobs) {
    const h = health.get(j.id);
    if (h && j.group) h.groupName = names.get(j.group) ?? null;
  }
  return health;
}

/**
 * The health of some jobs of an account, from the logs read model (one Summaries ask, which the
 * gateway's shared reads split into calls of 100 jobs: sharedReads.ts) and the group names from
 * the jobs service. A convenience like nextRun: when the logs
 * service cannot answer, the records come without it (null) instead of failing the read.
 */
export async function jobHealth(clients: Clients, accountId: bigint, jobs: { id: bigint; group?: bigint }[], nowMs: number): Promise<Map<bigint, JobHealth> | undefined> {
  const { logs } = clients;
  if (!logs || !jobs.length) return undefined;
  const since = BigInt(Math.floor(nowMs / 1000) - DAY_S);
  const hoursFrom = firstHour(nowMs);
  const [reply, names] = await Promise.all([
    logs.summaries({ accountId, ids: jobs.map((j) => j.id), recent: RECENT_OUTCOMES, since, hoursFrom: BigInt(hoursFrom), hours: HOURLY_HOURS }).catch(() => undefined),
    groupNames(clients, accountId, jobs),
  ]);
  if (!reply) return undefined;
  const health = new Map<bigint, JobHealth>();
  for (const s of reply.summaries) {
    const last = s.last && logRecord(s.last).result;
    health.set(s.jobId, {
      lastResult: last ? { ...last, output: cut(last.output), error: cut(last.error) } : null,
      recentOutcomes: s.recent.map(resultStatus),
      runs24h: s.runsSince,
      failures24h: s.failuresSince,
      hourly24h: { from: hoursFrom, runs: s.runsByHour, failures: s.failuresByHour },
      groupName: null,
    });
  }
  return nameGroups(jobs, health, names);
}

/**
 * The health of jobs this request has just created: no run yet, so nothing to ask the logs for
 * (a batch of 1000 would otherwise cost 1000 look-ups that can only find nothing).
 */
export async function newJobsHealth(clients: Clients, accountId: bigint, jobs: { id: bigint; group?: bigint }[], nowMs: number): Promise<Map<bigint, JobHealth> | undefined> {
  // A gateway with no logs service answers no health at all, new jobs included.
  if (!clients.logs) return undefined;
  const from = firstHour(nowMs);
  const health = new Map<bigint, JobHealth>();
  for (const j of jobs) {
    const runs = new Array<number>(HOURLY_HOURS).fill(0);
    health.set(j.id, { lastResult: null, recentOutcomes: [], runs24h: 0, failures24h: 0, hourly24h: { from, runs, failures: runs.slice() }, groupName: null });
  }
  return nameGroups(jobs, health, await groupNames(clients, accountId, jobs));
}
