import type { MessageInitShape } from '@bufbuild/protobuf';
import { AppError } from '../../shared/errors.ts';
import { GroupDeleteMode, JobAction, type JobSettingsSchema, type CronJob, type JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import type { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import type { PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import type { ServiceClient } from '../../shared/grpc/bridge.ts';
import { validatePayload } from '../../shared/payload.ts';
import { Params } from './params.ts';
import { accountRecord, groupRecord, jobRecord, logRecord } from './records.ts';

export interface Clients {
  jobs: ServiceClient<(typeof JobsService)['method']>;
  planner?: ServiceClient<(typeof PlannerService)['method']>;
  logs?: ServiceClient<(typeof LogsService)['method']>;
}

export interface Call {
  params: Params;
  accountId: bigint;
  /** The parsed JSON body when the request had one (cron_batch_add needs it). */
  json: Record<string, unknown> | null;
  canonical: (norm: string) => string | undefined;
}

type Fn = (call: Call, clients: Clients) => Promise<unknown>;

const STRINGS = ['url', 'expression', 'filter', 'timezone', 'username', 'password', 'httpMethod', 'postData', 'httpHeaders', 'userAgent', 'notifyMatch', 'keyword', 'pattern', 'name'] as const;
const INTS = ['delay', 'timeout', 'instances', 'notifyEvery', 'notifyTime', 'failureThreshold'] as const;

/** Every parameter name the API knows, for the "exact camelCase spelling wins" rule. */
export const KNOWN_PARAMS = [...STRINGS, ...INTS, 'notify', 'group', 'id', 'run', 'payload', 'token', 'page', 'limit', 'for', 'time', 'data', 'priority'];

/** The cron_add parameters present in `p`, as proto settings (absent stays absent). */
export function settingsFrom(p: Params): MessageInitShape<typeof JobSettingsSchema> {
  const s: Record<string, unknown> = {};
  for (const name of STRINGS) {
    const v = name === 'url' || name === 'expression' || name === 'timezone' || name === 'httpMethod' ? p.str(name) : p.strOrClear(name);
    if (v !== undefined) s[name] = v;
  }
  for (const name of INTS) {
    const v = p.int(name);
    if (v !== undefined) s[name] = checkInt32(name, v);
  }
  if (p.raw('notifyTime') === null) s.notifyTime = 0;
  const notify = p.bool('notify');
  if (notify !== undefined) s.notify = notify;
  const group = p.raw('group') === null ? 0 : p.int('group');
  if (group !== undefined) {
    if (group < 0) throw new AppError('INVALID_PARAMETER', `group: must be a group id, or 0 for none; got ${group}`);
    s.group = BigInt(group);
  }
  return s;
}

const checkInt32 = (name: string, v: number) => {
  if (Math.abs(v) > 2_147_483_647) throw new AppError('INVALID_PARAMETER', `${name}: ${v} is out of range`);
  return v;
};

const runOrder = (p: Params) => {
  const run = p.int('run');
  const payload = p.str('payload');
  if (run === undefined || run <= 0) {
    if (payload !== undefined) validatePayload(payload, p.str('httpMethod') ?? 'POST');
    return undefined;
  }
  return { run: BigInt(run), payload };
};

const id = (p: Params) => {
  const v = p.requiredInt('id');
  if (v <= 0) throw new AppError('INVALID_PARAMETER', `id: must be a positive integer, got ${v}`);
  return BigInt(v);
};

const ids = (p: Params) => {
  const list = p.intList('id');
  if (!list || list.length === 0) throw new AppError('MISSING_PARAMETER', 'id: is required (one id or a list of ids)');
  if (list.length > 1000) throw new AppError('LIMIT_EXCEEDED', `id: at most 1000 ids per batch, got ${list.length}`);
  list.forEach((v, i) => {
    if (v <= 0) throw new AppError('INVALID_PARAMETER', `id[${i}]: must be a positive integer, got ${v}`);
  });
  return list.map(BigInt);
};

const paging = (p: Params, maxLimit: number) => {
  const page = p.int('page') ?? 1;
  const limit = p.int('limit') ?? 0;
  if (page < 1) throw new AppError('INVALID_PARAMETER', `page: must be 1 or more, got ${page}`);
  if (limit < 0 || limit > maxLimit) throw new AppError('INVALID_PARAMETER', `limit: must be from 1 to ${maxLimit}, got ${limit}`);
  return { page, limit };
};

const need = <T>(client: T | undefined, what: string): T => {
  if (!client) throw new AppError('INTERNAL', `the ${what} service is not configured`);
  return client;
};

/** Adds nextRun (from the planner, which owns it) to job records. */
async function records(jobs: CronJob[], c: Clients, accountId: bigint) {
  const live = jobs.filter((j) => !j.deleted);
  let next: bigint[] = [];
  if (c.planner && live.length) {
    // nextRun is a convenience: a planner that is down or restarting must not fail job reads.
    next = await c.planner.nextRunOf({ accountId, ids: live.map((j) => j.id) }).then(
      (r) => r.nextRuns,
      () => [],
    );
  }
  const byId = new Map(live.map((j, i) => [j.id, next[i] ? Number(next[i]) : null]));
  return jobs.map((j) => jobRecord(j, byId.get(j.id) ?? null));
}
const record = async (job: CronJob, c: Clients, accountId: bigint) => (await records([job], c, accountId))[0];

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

/** The API, one entry per function of spec 4.2 and DECISIONS 3-4. */
export const FUNCTIONS: Record<string, Fn> = {
  cron_list: async ({ params, accountId }, c) => {
    const { page, limit } = paging(params, 1000);
    const { jobs } = await c.jobs.listJobs({ accountId, page, limit, keyword: params.str('keyword') ?? '' });
    return records(jobs, c, accountId);
  },
  cron_get: async ({ params, accountId }, c) => record(await c.jobs.getJob({ accountId, id: id(params) }), c, accountId),
  cron_add: async ({ params, accountId }, c) => {
    const run = runOrder(params);
    const { jobs } = await c.jobs.addJobs({ accountId, jobs: [settingsFrom(params)], runs: run ? [run] : [] });
    return record(jobs[0], c, accountId);
  },
  cron_batch_add: async ({ json, accountId, canonical }, c) => {
    if (!json) throw new AppError('INVALID_PARAMETER', 'data: cron_batch_add takes a JSON body: {"data": [{...}, ...]}');
    const data = new Params([json], canonical).raw('data');
    if (data === undefined || data === null) throw new AppError('MISSING_PARAMETER', 'data: is required (an array of cron_add parameter objects)');
    if (!Array.isArray(data)) throw new AppError('INVALID_PARAMETER', 'data: must be an array of cron_add parameter objects');
    if (data.length === 0) throw new AppError('MISSING_PARAMETER', 'data: must hold at least one cron job');
    if (data.length > 1000) throw new AppError('LIMIT_EXCEEDED', `data: at most 1000 cron jobs per batch, got ${data.length}`);
    const elements = data.map((element, i) => {
      if (!element || typeof element !== 'object' || Array.isArray(element)) throw new AppError('INVALID_PARAMETER', `data[${i}]: must be an object of cron_add parameters`);
      const p = new Params([element as Record<string, unknown>], canonical);
      try {
        return { settings: settingsFrom(p), run: runOrder(p) ?? { run: 0n } };
      } catch (error) {
        if (error instanceof AppError) throw new AppError(error.kind, `data[${i}].${error.message}`);
        throw error;
      }
    });
    const { jobs } = await c.jobs.addJobs({ accountId, jobs: elements.map((e) => e.settings), runs: elements.map((e) => e.run) });
    return records(jobs, c, accountId);
  },
  cron_edit: async ({ params, accountId }, c) => {
    const { jobs } = await c.jobs.editJobs({ accountId, ids: [id(params)], settings: settingsFrom(params), run: runOrder(params) });
    return record(jobs[0], c, accountId);
  },
  cron_batch_edit: async ({ params, accountId }, c) => {
    const { jobs } = await c.jobs.editJobs({ accountId, ids: ids(params), settings: settingsFrom(params) });
    return records(jobs, c, accountId);
  },
  cron_group_edit: async ({ params, accountId }, c) => {
    const { jobs } = await c.jobs.editJobs({ accountId, groupId: id(params), settings: settingsFrom(params) });
    return records(jobs, c, accountId);
  },
  cron_enable: action(JobAction.ENABLE, true),
  cron_disable: action(JobAction.DISABLE, true),
  cron_pause: action(JobAction.PAUSE, true),
  cron_delete: action(JobAction.DELETE, true),
  cron_batch_delete: action(JobAction.DELETE, false),
  cron_run: async ({ params, accountId }, c) => {
    const jobId = id(params);
    const time = params.int('time') ?? 0;
    if (time < 0) throw new AppError('INVALID_PARAMETER', `time: must be a Unix timestamp, got ${time}`);
    const { at } = await c.jobs.runJob({ accountId, id: jobId, time: BigInt(time), payload: params.str('payload') });
    return Number(at);
  },
  cron_logs: logs(false),
  cron_show: logs(false),
  cron_failures: logs(true),
  cron_next: async ({ params, accountId }, c) => {
    const jobId = id(params);
    const limit = params.int('limit') ?? 10;
    if (limit < 1 || limit > 100) throw new AppError('INVALID_PARAMETER', `limit: must be from 1 to 100, got ${limit}`);
    await c.jobs.getJob({ accountId, id: jobId });
    const { times } = await need(c.planner, 'planner').nextRuns({ accountId, id: jobId, limit });
    return times.map(Number);
  },
  cron_history: async ({ params, accountId }, c) => {
    const { page, limit } = paging(params, 1000);
    const { entries } = await c.jobs.jobHistory({ accountId, id: id(params), page, limit });
    return entries.map((e) => ({ revision: Number(e.revision), time: Number(e.time), type: e.type, data: JSON.parse(e.dataJson) }));
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
    groupRecord(await c.jobs.addGroup({ accountId, name: params.requiredStr('name'), priority: params.int('priority') ?? 0 })),
  group_edit: async ({ params, accountId }, c) =>
    groupRecord(await c.jobs.editGroup({ accountId, id: id(params), name: params.str('name'), priority: params.int('priority') })),
  group_delete: groupDelete(GroupDeleteMode.UNGROUP),
  group_vanish: groupDelete(GroupDeleteMode.VANISH),
  group_empty: groupDelete(GroupDeleteMode.EMPTY),
  group_items: async ({ params, accountId }, c) => {
    const groupId = id(params);
    await c.jobs.getGroup({ accountId, id: groupId });
    const { page, limit } = paging(params, 1000);
    return records((await c.jobs.listJobs({ accountId, groupId, page, limit })).jobs, c, accountId);
  },
  account_get: async ({ accountId }, c) => accountRecord(await c.jobs.getAccount({ id: accountId })),
  account_edit: async ({ params, accountId }, c) => accountRecord(await c.jobs.editAccount({ id: accountId, timezone: params.str('timezone') })),
};
