import { createHash } from 'node:crypto';
import type Koa from 'koa';
import { AppError } from '../../shared/errors.ts';
import type { CronJob } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { badgeLabel, badgeState, badgeSvg, type LastRun } from './badge.ts';
import { need, type Clients, type Fn } from './call.ts';
import { id, int32 } from './inputs.ts';
import { logRecord } from './records.ts';
import { isoInZone } from './zoneTime.ts';

/** The path of a badge: what the owner puts in a README. */
export const badgePath = (token: string) => `/badge/${token}.svg`;
/** How long a badge may be cached (s): a README shows a state at most this old; a revoked URL is refused at once by Tock itself. */
export const BADGE_MAX_AGE = 60;

/** account_calendar's bounds (docs/api.md): hours ahead, runs per job, runs in all. */
export const CALENDAR_HOURS = 24;
export const CALENDAR_PER_JOB = 100;
export const CALENDAR_LIMIT = 1000;

function badgeRecord(jobId: bigint, token: string, issuedAt: bigint, name: string, origin: string | undefined) {
  const path = badgePath(token);
  const url = origin ? `${origin}${path}` : null;
  // The alt text is the label: brackets in a job name would end the Markdown link early.
  const alt = badgeLabel(name).replace(/[[\]\\]/g, '');
  return { id: Number(jobId), token, path, url, markdown: url ? `![${alt}](${url})` : null, issuedAt: Number(issuedAt) };
}

/**
 * Tock's additions of issue 22, point 8: a status badge per job (cron_badge, cron_badge_revoke,
 * and its public URL, `serveBadge`) and the account's calendar of the next runs.
 */
export const BADGE_CALENDAR_FUNCTIONS: Record<string, Fn> = {
  // The only answer that shows a badge's token: to the job's owner.
  cron_badge: async ({ params, accountId, origin }, c) => {
    const jobId = id(params);
    const job = await c.jobs.getJob({ accountId, id: jobId });
    const badge = await c.jobs.issueBadge({ accountId, id: jobId });
    return badgeRecord(jobId, badge.token, badge.issuedAt, job.name, origin);
  },
  cron_badge_revoke: async ({ params, accountId }, c) => {
    const jobId = id(params);
    const { revoked } = await c.jobs.revokeBadge({ accountId, id: jobId });
    return { id: Number(jobId), revoked };
  },
  account_calendar: async ({ params, accountId }, c) => {
    const hours = int32(params, 'hours') ?? CALENDAR_HOURS;
    if (hours < 1 || hours > CALENDAR_HOURS) throw new AppError('INVALID_PARAMETER', `must be from 1 to ${CALENDAR_HOURS}, got ${hours}`, { field: ['hours'] });
    const limit = int32(params, 'limit') ?? CALENDAR_LIMIT;
    if (limit < 1 || limit > CALENDAR_LIMIT) throw new AppError('INVALID_PARAMETER', `must be from 1 to ${CALENDAR_LIMIT}, got ${limit}`, { field: ['limit'] });
    const reply = await need(c.planner, 'planner').calendar({ accountId, spanMs: BigInt(hours * 3_600_000), perJob: CALENDAR_PER_JOB, limit });
    // The planner's clock, which the runs follow.
    const from = Math.floor(Number(reply.from) / 1000);
    const entries = reply.runs.map((r) => {
      const ms = Number(r.at);
      return { id: Number(r.jobId), name: r.name, time: Math.floor(ms / 1000), timezone: r.timezone, local: isoInZone(ms, r.timezone) };
    });
    return { from, until: from + hours * 3600, truncated: reply.truncated, runs: entries };
  },
};

/** Unknown, revoked, or its job deleted: one answer for all, so a URL tells nothing of its past. */
const NO_BADGE = new AppError('NOT_FOUND', 'no such badge');

/** Only well-formed tokens are looked up: 32 characters of base64url, as cron_badge makes them. */
const TOKEN = /^([A-Za-z0-9_-]{32})\.svg$/;

/**
 * GET /badge/<token>.svg: the job's state as an SVG, to anyone who has the URL (the token is the
 * credential). Unknown, revoked and deleted look alike: 404. Only the token's hash leaves the
 * gateway, as with account tokens.
 */
export function serveBadge(clients: Clients, now: () => number): Koa.Middleware {
  return async (ctx) => {
    const match = TOKEN.exec(String((ctx.params as { file?: string }).file ?? ''));
    ctx.set('X-Content-Type-Options', 'nosniff');
    const job = match ? await clients.jobs.badgeJob({ tokenHash: createHash('sha256').update(match[1]!).digest('hex') }).catch(notFoundAsUndefined) : undefined;
    if (!job) {
      ctx.status = 404;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'error', code: NO_BADGE.code, message: NO_BADGE.message };
      return;
    }
    const last = await lastRun(clients, job);
    ctx.type = 'image/svg+xml; charset=utf-8';
    ctx.set('Cache-Control', `public, max-age=${BADGE_MAX_AGE}`);
    // Even opened on its own, the document may run nothing and load nothing.
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    ctx.body = badgeSvg(badgeLabel(job.name), badgeState(job, last, now()));
  };
}

const notFoundAsUndefined = (error: unknown) => {
  if (error instanceof AppError && error.kind === 'NOT_FOUND') return undefined;
  throw error;
};

/** The job's last run, from the logs service; null when it never ran or the logs cannot answer (the badge still shows the job's state). */
async function lastRun(clients: Clients, job: CronJob): Promise<LastRun | null> {
  if (!clients.logs) return null;
  try {
    const { summaries } = await clients.logs.summaries({ accountId: job.accountId, ids: [job.id], recent: 1, since: BigInt(Math.floor(Date.now() / 1000)), hoursFrom: 0n, hours: 0 });
    const last = summaries[0]?.last;
    if (!last) return null;
    const r = logRecord(last).result;
    return { time: r.time, status: r.status };
  } catch {
    return null;
  }
}
