import { AppError, inside, isAppError } from '../../shared/errors.ts';
import { GroupDeleteMode, JobAction, type CronJob } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { id, ids, int32, paging, positive, extraRun, runTime, settingsFrom } from './inputs.ts';
import { Params } from './params.ts';
import { BADGE_CALENDAR_FUNCTIONS } from './badgeCalendar.ts';
import { need, type Clients, type Fn } from './call.ts';
import { single } from '../../shared/single.ts';
import { slicedMap, timeSlicer } from '../../shared/timeSlice.ts';
import { jobHealth, newJobsHealth, NO_HEALTH } from './health.ts';
import { RateLimitError } from './rateLimit.ts';
import { accountRecord, channelRecord, groupRecord, historyRecord, jobRecord, logRecord, nextRunDetails, snoozeRecord, testRecord } from './records.ts';

export type { Call, Clients } from './call.ts';

/** A 5xx whose message was written here for the client (no internals): shown as it is. */
export class ExplainedError extends AppError {}

/** `data` of cron_batch_add: an array, or (from clients that send every value as a string) its JSON text. */
function batchData(data: unknown): unknown[] {
  if (typeof data === 'string' && /^\s*\[/.test(data)) {
    try {
      data = JSON.parse(data);
    } catch {
      throw new AppError('INVALID_PARAMETER', 'must be an array of cron_add parameter objects; this text is not valid JSON', { field: ['data'] });
    }
  }
  if (data === undefined || data === null || data === '') throw new AppError('MISSING_PARAMETER', 'is required (an array of cron_add parameter objects)', { field: ['data'] });
  if (!Array.isArray(data)) throw new AppError('INVALID_PARAMETER', 'must be an array of cron_add parameter objects', { field: ['data'] });
  if (data.length === 0) throw new AppError('MISSING_PARAMETER', 'must hold at least one cron job', { field: ['data'] });
  return data;
}

/** An error about a parameter of a batch's only element, which the jobs service does not place (it does in batches of two or more). */
const aboutOnlyElement = (error: unknown): error is AppError =>
  error instanceof AppError && error.field.length > 0 && error.field[0] !== 'data' && error.field[0] !== 'idempotencyKey';

/**
 * notifyChannels names channels of the notifier's: each id must be one of the account's channels
 * (another account's, or a deleted one, is refused like a typo), checked before anything changes.
 */
async function checkChannels(c: Clients, accountId: bigint, settings: { notifyChannels?: string }[]) {
  const named = settings.flatMap((s, i) => (s.notifyChannels ?? '').split(',').map((p) => p.trim()).filter(Boolean).map((p) => ({ i, p })));
  if (!named.length) return;
  const owned = new Set((await need(c.notifier, 'notifier').channelList({ accountId })).channels.map((ch) => String(ch.id)));
  const missing = named.find(({ p }) => /^\d+$/.test(p) && !owned.has(String(Number(p))));
  if (missing) {
    const error = new AppError('INVALID_PARAMETER', `channel ${missing.p} not found`, { field: ['notifyChannels'] });
    throw settings.length > 1 ? error.within('data', missing.i) : error;
  }
}

/**
 * Job records: each job's settings and state, nextRun (from the planner, which owns it) and Tock's
 * additions from the logs (last result, recent outcomes, counts of the last day; null when deleted
 * or when the logs service cannot answer). `created`: the jobs were created by this request, so
 * they have no run for the logs to tell of.
 */
async function records(jobs: CronJob[], c: Clients, accountId: bigint, { created = false } = {}) {
  const live = jobs.filter((j) => !j.deleted);
  // nextRun is a convenience: a planner that is down or restarting must not fail job reads.
  const [next, health] = await Promise.all([
    c.planner && live.length ? c.planner.nextRunOf({ accountId, ids: live.map((j) => j.id) }).then((r) => r.nextRuns, () => [] as bigint[]) : ([] as bigint[]),
    (created ? newJobsHealth : jobHealth)(c, accountId, live, Date.now()),
  ]);
  const byId = new Map(live.map((j, i) => [j.id, next[i] ? Number(next[i]) : null]));
  return slicedMap(jobs, (j) => Object.assign(jobRecord(j, byId.get(j.id) ?? null), health?.get(j.id) ?? NO_HEALTH));
}
const record = async (job: CronJob, c: Clients, accountId: bigint, options?: { created?: boolean }) => (await records([job], c, accountId, options))[0];

const action = (a: JobAction, single: boolean): Fn => async ({ params, accountId }, c) => {
  const list = single ? [id(params)] : ids(params);
  const pauseFor = a === JobAction.PAUSE ? params.str('for')?.trim() || undefined : undefined;
  const { jobs } = await c.jobs.applyAction({ accountId, ids: list, action: a, pauseFor });
  const out = await records(jobs, c, accountId);
  return single ? out[0] : out;
};

const logs = (failuresOnly: boolean): Fn => async ({ params, accountId }, c) => {
  const jobId = failuresOnly && !params.has('id') ? 0n : id(params);
  const { page, limit } = paging(params, 1000);
  const keyword = params.str('keyword') ?? '';
  if (jobId > 0n) await c.jobs.getJob({ accountId, id: jobId });
  const reply = await need(c.logs, 'logs').logs({ accountId, id: jobId, failuresOnly, keyword, page, limit });
  return reply.entries.map(logRecord);
};

const groupDelete = (mode: GroupDeleteMode): Fn => async ({ params, accountId }, c) => {
  const groupId = id(params);
  const group = await c.jobs.getGroup({ accountId, id: groupId });
  await c.jobs.deleteGroup({ accountId, id: groupId, mode });
  return mode === GroupDeleteMode.EMPTY ? groupRecord({ ...group, jobCount: 0 }) : groupRecord(group, true);
};

/** The address parameters of a channel present in the request (absent stays absent). */
const channelAddress = (params: Params) => ({ email: params.str('email'), url: params.str('url'), botToken: params.str('botToken'), chatId: params.str('chatId') });

/** The API, one entry per function that docs/api.md lists. */
export const FUNCTIONS: Record<string, Fn> = {
  cron_list: async ({ params, accountId }, c) => {
    const { page, limit } = paging(params, 1000);
    const { jobs } = await c.jobs.listJobs({ accountId, page, limit, keyword: params.str('keyword') ?? '' });
    return records(jobs, c, accountId);
  },
  cron_get: async ({ params, accountId }, c) => record(await c.jobs.getJob({ accountId, id: id(params) }), c, accountId),
  cron_add: async ({ params, accountId }, c) => {
    const run = extraRun(params);
    const settings = settingsFrom(params);
    await checkChannels(c, accountId, [settings]);
    const { jobs } = await c.jobs.addJobs({ accountId, jobs: [settings], runs: run ? [run] : [] });
    return record(single(jobs, 'cron_add'), c, accountId, { created: true });
  },
  cron_batch_add: async ({ json, accountId, canonical, params, idempotencyKey: header }, c) => {
    if (!json) throw new AppError('INVALID_PARAMETER', 'cron_batch_add takes a JSON body: {"data": [{...}, ...]}', { field: ['data'] });
    const body = new Params([json], canonical);
    const data = batchData(body.raw('data'));
    const idempotencyKey = header ?? body.str('idempotencyKey') ?? params.str('idempotencyKey');
    // Read in slices: 1000 elements take tens of milliseconds, and other requests wait meanwhile;
    // the first turn is given at once (parsing the body took this one).
    const elements = await slicedMap(
      data,
      (element, i) =>
        inside(['data', i], () => {
          if (!element || typeof element !== 'object' || Array.isArray(element)) throw new AppError('INVALID_PARAMETER', 'must be an object of cron_add parameters');
          const p = new Params([element as Record<string, unknown>], canonical);
          return { settings: settingsFrom(p), run: extraRun(p) ?? { run: 0n } };
        }),
      timeSlicer({ yieldFirst: true }),
    );
    try {
      await checkChannels(c, accountId, elements.map((e) => e.settings));
      // A store or the jobs service failing mid-batch: the client must know what a retry does.
      const failed = (error: unknown): never => {
        if (isAppError(error) && error.httpStatus < 500) throw error;
        throw new ExplainedError(
          'UNAVAILABLE',
          idempotencyKey !== undefined
            ? 'the batch was not completely written (the service failed); send it again with the same idempotency key to complete it without duplicates'
            : 'the batch may be partly written (the service failed part way); check cron_list before sending it again, or send an X-Idempotency-Key so that a retry completes it without duplicates',
          { cause: error },
        );
      };
      const reply = await c.jobs.addJobs({ accountId, jobs: elements.map((e) => e.settings), runs: elements.map((e) => e.run), idempotencyKey }).catch(failed);
      if (reply.batchAnswer !== undefined) return JSON.parse(reply.batchAnswer) as unknown;
      // Without a key every job is new; with one, a retry may complete a batch whose first jobs have run since.
      const answer = await records(reply.jobs, c, accountId, { created: idempotencyKey === undefined });
      if (idempotencyKey === undefined) return answer;
      // Kept with the key before it is sent, so a replay answers exactly this (nextRun and the
      // jobs' health as they were now); a concurrent request's answer, when it was kept first.
      const sent = JSON.stringify(answer);
      const kept = await c.jobs.recordBatchAnswer({ accountId, idempotencyKey, answer: sent }).catch(failed);
      return kept.answer === sent ? answer : (JSON.parse(kept.answer) as unknown);
    } catch (error) {
      // A batch of one says data[0] too.
      if (data.length === 1 && aboutOnlyElement(error)) throw error.within('data', 0);
      throw error;
    }
  },
  cron_edit: async ({ params, accountId }, c) => {
    const settings = settingsFrom(params);
    await checkChannels(c, accountId, [settings]);
    const { jobs } = await c.jobs.editJobs({ accountId, ids: [id(params)], settings, run: extraRun(params) });
    return record(single(jobs, 'cron_edit'), c, accountId);
  },
  cron_batch_edit: async ({ params, accountId }, c) => {
    const settings = settingsFrom(params);
    await checkChannels(c, accountId, [settings]);
    const { jobs } = await c.jobs.editJobs({ accountId, ids: ids(params), settings });
    return records(jobs, c, accountId);
  },
  cron_group_edit: async ({ params, accountId }, c) => {
    const settings = settingsFrom(params);
    await checkChannels(c, accountId, [settings]);
    const { jobs } = await c.jobs.editJobs({ accountId, groupId: id(params), settings });
    return records(jobs, c, accountId);
  },
  cron_enable: action(JobAction.ENABLE, true),
  cron_disable: action(JobAction.DISABLE, true),
  cron_pause: action(JobAction.PAUSE, true),
  cron_delete: action(JobAction.DELETE, true),
  cron_batch_delete: action(JobAction.DELETE, false),
  // Tock's: the same actions on a list of jobs in one call, all or none (one refused id changes nothing).
  cron_batch_enable: action(JobAction.ENABLE, false),
  cron_batch_disable: action(JobAction.DISABLE, false),
  cron_batch_pause: action(JobAction.PAUSE, false),
  cron_run: async ({ params, accountId }, c) => {
    const jobId = id(params);
    const time = runTime(params);
    const { at } = await c.jobs.runJob({ accountId, id: jobId, time, payload: params.str('payload') });
    return Number(at);
  },
  // Tock's: one call of the settings as given (a new job's, or job `id` changed by them), made by
  // an executor like a run and recorded nowhere.
  cron_test: async ({ params, accountId }, c) => {
    const { answer, url } = await c.jobs.testJob({ accountId, id: params.has('id') ? id(params) : 0n, settings: settingsFrom(params) }).catch((error: unknown) => {
      // The executor's refusal when the account's share of its calls is in use: said here, in the
      // gateway's words (a peer's message is never shown for a 5xx).
      if (isAppError(error) && error.kind === 'RATE_LIMITED') throw new RateLimitError(1, "the account's share of calls on the executor is in use (runs or tests in progress); retry in 1 second");
      throw error;
    });
    if (!answer) throw new AppError('INTERNAL', 'the jobs service answered a test without its result');
    return testRecord(answer, url);
  },
  cron_logs: logs(false),
  cron_show: logs(false),
  cron_failures: logs(true),
  cron_next: async ({ params, accountId }, c) => {
    const jobId = id(params);
    const limit = int32(params, 'limit') ?? 10;
    if (limit < 1 || limit > 100) throw new AppError('INVALID_PARAMETER', `must be from 1 to 100, got ${limit}`, { field: ['limit'] });
    const job = await c.jobs.getJob({ accountId, id: jobId });
    const { times } = await need(c.planner, 'planner').nextRuns({ accountId, id: jobId, limit });
    const runs = times.map(Number);
    // Tock's `detail`: each run says whether a daylight-saving change moved or repeated it.
    return params.bool('detail') ? nextRunDetails(job, runs) : runs;
  },
  cron_history: async ({ params, accountId }, c) => {
    const { page, limit } = paging(params, 1000);
    const { entries } = await c.jobs.jobHistory({ accountId, id: id(params), page, limit, versionsOnly: params.bool('versions') ?? false });
    return entries.map(historyRecord);
  },
  cron_rollback: async ({ params, accountId }, c) => {
    const jobId = id(params);
    const version = positive(params, 'version');
    // Decided first without writing: channels it would name again are checked with the notifier,
    // as cron_edit checks them, before anything changes.
    const planned = await c.jobs.rollbackJob({ accountId, id: jobId, version, dryRun: true });
    if (planned.changed.includes('notifyChannels')) await checkChannels(c, accountId, [{ notifyChannels: planned.job!.notifyChannels }]);
    const { job } = await c.jobs.rollbackJob({ accountId, id: jobId, version });
    return record(job!, c, accountId);
  },
  group_list: async ({ accountId }, c) => (await c.jobs.listGroups({ accountId })).groups.map((g) => groupRecord(g)),
  group_get: async ({ params, accountId }, c) => groupRecord(await c.jobs.getGroup({ accountId, id: id(params) })),
  group_lookup: async ({ params, accountId }, c) => {
    const name = params.requiredStr('name');
    const [group] = (await c.jobs.listGroups({ accountId, name: name.trim() })).groups;
    if (!group) throw new AppError('NOT_FOUND', `group named "${name}" not found`);
    return groupRecord(group);
  },
  group_add: async ({ params, accountId }, c) =>
    groupRecord(await c.jobs.addGroup({ accountId, name: params.requiredStr('name'), priority: int32(params, 'priority') ?? 0 })),
  group_edit: async ({ params, accountId }, c) =>
    groupRecord(await c.jobs.editGroup({ accountId, id: id(params), name: params.str('name'), priority: int32(params, 'priority') })),
  group_delete: groupDelete(GroupDeleteMode.UNGROUP),
  group_vanish: groupDelete(GroupDeleteMode.VANISH),
  group_empty: groupDelete(GroupDeleteMode.EMPTY),
  group_items: async ({ params, accountId }, c) => {
    const groupId = id(params);
    await c.jobs.getGroup({ accountId, id: groupId });
    const { page, limit } = paging(params, 1000);
    return records((await c.jobs.listJobs({ accountId, groupId, page, limit })).jobs, c, accountId);
  },
  channel_list: async ({ accountId }, c) => (await need(c.notifier, 'notifier').channelList({ accountId })).channels.map(channelRecord),
  channel_add: async ({ params, accountId }, c) =>
    channelRecord(
      await need(c.notifier, 'notifier').channelAdd({ accountId, type: params.str('type') ?? '', name: params.str('name') ?? '', escalateAfter: int32(params, 'escalateAfter'), ...channelAddress(params) }),
    ),
  channel_edit: async ({ params, accountId }, c) =>
    channelRecord(
      await need(c.notifier, 'notifier').channelEdit({
        accountId,
        id: id(params),
        name: params.str('name'),
        enabled: params.bool('enabled'),
        escalateAfter: int32(params, 'escalateAfter'),
        ...channelAddress(params),
      }),
    ),
  channel_delete: async ({ params, accountId }, c) => channelRecord(await need(c.notifier, 'notifier').channelDelete({ accountId, id: id(params) })),
  channel_test: async ({ params, accountId }, c) => {
    const reply = await need(c.notifier, 'notifier').channelTest({ accountId, id: id(params) });
    return { delivered: reply.delivered, error: reply.error };
  },
  // With channel_add, the only answer that shows a channel's signing secret.
  channel_secret_rotate: async ({ params, accountId }, c) => {
    const overlap = params.int('overlap');
    const reply = await need(c.notifier, 'notifier').channelSecretRotate({ accountId, id: id(params), overlap: overlap === undefined ? undefined : BigInt(overlap) });
    const until = Number(reply.previousValidUntil);
    return { ...channelRecord(reply.channel!), previousValidUntil: until > 0 ? Math.floor(until / 1000) : null };
  },
  cron_snooze: async ({ params, accountId }, c) => {
    const duration = params.str('for')?.trim() || undefined;
    return snoozeRecord(await need(c.notifier, 'notifier').jobSnooze({ accountId, id: id(params), duration }));
  },
  cron_unsnooze: async ({ params, accountId }, c) => snoozeRecord(await need(c.notifier, 'notifier').jobUnsnooze({ accountId, id: id(params) })),
  ...BADGE_CALENDAR_FUNCTIONS,
  account_get: async ({ accountId }, c) => accountRecord(await c.jobs.getAccount({ id: accountId })),
  account_edit: async ({ params, accountId }, c) => accountRecord(await c.jobs.editAccount({ id: accountId, timezone: params.str('timezone') })),
  // Tock's: the caller's new token, shown only in this answer; the one that made this call stops working at once.
  account_token_rotate: async ({ accountId, tokenHash }, c) => {
    const { account, token } = await c.jobs.rotateToken({ id: accountId, tokenHash });
    return { ...accountRecord(account!), token };
  },
  // The only answer that ever shows a signing secret.
  account_secret_rotate: async ({ accountId }, c) => {
    const { signingSecret, previousValidUntil } = await c.jobs.rotateSigningSecret({ id: accountId });
    return { secret: signingSecret, previousValidUntil: previousValidUntil > 0n ? Math.floor(Number(previousValidUntil) / 1000) : null };
  },
};
