import { apiFrom, type Api } from './apiClient.ts';
import { idOf, noPositionals, parse, settingsOf, UsageError } from './args.ts';
import type { Io } from './io.ts';
import { fields, instant, jobStatus, json, table } from './output.ts';
import { versionText, type HistoryEntry } from './versionText.ts';

export const JOBS_USAGE = `usage:
  tock jobs list [--keyword TEXT] [--json]
  tock jobs get <id> [--json]
  tock jobs add name=value... [--json]       e.g. url=https://example.com/ping 'expression=*/5 * * * *'
  tock jobs edit <id> name=value... [--json] e.g. timeout=10 'name=nightly report'
  tock jobs delete <id>
  tock jobs run <id> [--time UNIX] [--payload TEXT]
  tock jobs test [<id>] name=value... [--json] one call of these settings (or job <id> changed by them), saved nowhere
  tock jobs pause <id> [--for DURATION]      e.g. --for '2 hours'; without --for until enabled
  tock jobs enable|disable <id>
  tock jobs history <id> [--json]            its versions: number, time, what changed
  tock jobs rollback <id> <version>          restores the settings of that version, as a new version
  tock jobs snooze <id> [--for DURATION]     its notifications silenced; without --for until its next success
  tock jobs unsnooze <id>
  tock jobs badge <id> [--revoke] [--json]   its status badge: the SVG's URL and Markdown (--revoke ends it)
name=value pairs are cron_add / cron_edit parameters, checked by the API as it checks any client's.
Connection: --url (TOCK_URL, default http://127.0.0.1:8080) and --token (TOCK_TOKEN).`;

interface JobRecord {
  id: number;
  name: string;
  expression: string;
  timezone: string;
  url: string;
  status: number;
  fail: number;
  nextRun: number | null;
  [field: string]: unknown;
}

const OPTIONS = {
  keyword: { type: 'string' },
  time: { type: 'string' },
  payload: { type: 'string' },
  for: { type: 'string' },
  revoke: { type: 'boolean' },
} as const;

/** Every version of a job, newest first: the history's pages until one comes back short. */
async function allVersions(api: Api, id: string): Promise<HistoryEntry[]> {
  const PAGE = 1000;
  const versions: HistoryEntry[] = [];
  for (let page = 1; ; page++) {
    const entries = await api<HistoryEntry[]>('cron_history', { id, versions: '1', page: String(page), limit: String(PAGE) });
    versions.push(...entries);
    if (entries.length < PAGE) return versions;
  }
}

/** `tock jobs ...`: a job owner's commands, each one call to the public API with their token. */
export async function jobsCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, OPTIONS, JOBS_USAGE);
  const verb = parsed.positionals.shift();
  if (verb === undefined) throw new UsageError('a jobs command is required', JOBS_USAGE);
  const api = apiFrom(parsed, io.env, JOBS_USAGE);
  const { values } = parsed;
  const asJson = values.json === true;
  const str = (name: string) => values[name] as string | undefined;
  const show = (job: JobRecord, done: string) => {
    if (asJson) json(io.out, job);
    else io.out(`${done}; status ${jobStatus(job.status)}${job.nextRun ? `, next run ${instant(job.nextRun)}` : ''}`);
    return 0;
  };
  const action = async (fn: string, done: string, params: Record<string, string> = {}) => {
    const id = idOf(parsed, 'a job', JOBS_USAGE);
    return show(await api<JobRecord>(fn, { id, ...params }), `job ${id} ${done}`);
  };

  switch (verb) {
    case 'list': {
      noPositionals(parsed, JOBS_USAGE);
      const jobs = await api<JobRecord[]>('cron_list', str('keyword') ? { keyword: str('keyword')! } : {});
      if (asJson) json(io.out, jobs);
      else table(io.out, ['id', 'name', 'expression', 'timezone', 'status', 'next run', 'url'], jobs.map((j) => [j.id, j.name, j.expression, j.timezone, jobStatus(j.status), instant(j.nextRun), j.url]));
      return 0;
    }
    case 'get': {
      const job = await api<JobRecord>('cron_get', { id: idOf(parsed, 'a job', JOBS_USAGE) });
      if (asJson) json(io.out, job);
      else {
        const times = Object.fromEntries(['nextRun', 'pausedUntil', 'createdAt', 'updatedAt'].map((f) => [f, instant(job[f] as number | null)]));
        fields(io.out, { ...job, status: `${job.status} (${jobStatus(job.status)})`, ...times });
      }
      return 0;
    }
    case 'add': {
      const settings = settingsOf(parsed.positionals, JOBS_USAGE);
      if (!Object.keys(settings).length) throw new UsageError('the job needs settings: url=... (and expression=..., else the API default)', JOBS_USAGE);
      const job = await api<JobRecord>('cron_add', settings);
      return show(job, `job ${job.id} added`);
    }
    case 'edit': {
      const [id, ...pairs] = parsed.positionals;
      const checkedId = idOf({ ...parsed, positionals: id === undefined ? [] : [id] }, 'a job', JOBS_USAGE);
      const settings = settingsOf(pairs, JOBS_USAGE);
      if (!Object.keys(settings).length) throw new UsageError('nothing to change: give name=value pairs', JOBS_USAGE);
      return show(await api<JobRecord>('cron_edit', { ...settings, id: checkedId }), `job ${checkedId} changed`);
    }
    case 'delete': {
      const id = idOf(parsed, 'a job', JOBS_USAGE);
      const job = await api<JobRecord>('cron_delete', { id });
      if (asJson) json(io.out, job);
      else io.out(`job ${id} deleted`);
      return 0;
    }
    case 'run': {
      const id = idOf(parsed, 'a job', JOBS_USAGE);
      const params: Record<string, string> = { id };
      if (str('time') !== undefined) params.time = str('time')!;
      if (str('payload') !== undefined) params.payload = str('payload')!;
      const at = await api<number>('cron_run', params);
      if (asJson) json(io.out, at);
      else io.out(`job ${id} runs at ${instant(at)}`);
      return 0;
    }
    case 'history': {
      const id = idOf(parsed, 'a job', JOBS_USAGE);
      const versions = await allVersions(api, id);
      if (asJson) json(io.out, versions);
      else table(io.out, ['version', 'time', 'what changed'], versions.map((v) => [v.version, instant(v.time), versionText(v)]));
      return 0;
    }
    case 'rollback': {
      const [id, version, ...extra] = parsed.positionals;
      const checkedId = idOf({ ...parsed, positionals: id === undefined ? [] : [id] }, 'a job', JOBS_USAGE);
      if (version === undefined) throw new UsageError('the version to restore is required (tock jobs history <id> lists them)', JOBS_USAGE);
      if (!/^[1-9]\d*$/.test(version)) throw new UsageError(`the version must be a positive whole number, got '${version}'`, JOBS_USAGE);
      if (extra.length) throw new UsageError(`unexpected argument '${extra[0]}'`, JOBS_USAGE);
      return show(await api<JobRecord>('cron_rollback', { id: checkedId, version }), `job ${checkedId} has the settings of version ${version}`);
    }
    case 'test': {
      const [first, ...rest] = parsed.positionals;
      const id = first !== undefined && /^\d+$/.test(first) ? first : undefined;
      const settings = settingsOf(id === undefined ? parsed.positionals : rest, JOBS_USAGE);
      if (id === undefined && !Object.keys(settings).length) throw new UsageError('give the settings to test (url=...) or a job id', JOBS_USAGE);
      const answer = await api<{ status: number; httpStatus: number; error: string; executionTime: number; ip: string; url: string; output: string }>('cron_test', id === undefined ? settings : { ...settings, id });
      if (asJson) json(io.out, answer);
      else {
        const http = answer.httpStatus ? `HTTP ${answer.httpStatus}` : 'no response';
        io.out(`${answer.status === 0 ? 'succeeded' : `failed (${answer.error})`}: ${http} in ${answer.executionTime.toFixed(3)} s from ${answer.url}${answer.ip ? ` (${answer.ip})` : ''}`);
        if (answer.output) io.out(answer.output);
      }
      return 0;
    }
    case 'pause':
      return action('cron_pause', str('for') ? `paused for ${str('for')}` : 'paused', str('for') ? { for: str('for')! } : {});
    case 'snooze':
    case 'unsnooze': {
      const id = idOf(parsed, 'a job', JOBS_USAGE);
      const params: Record<string, string> = verb === 'snooze' && str('for') ? { id, for: str('for')! } : { id };
      const r = await api<{ snoozed: boolean; until: number | null; untilRecovery: boolean }>(`cron_${verb}`, params);
      if (asJson) json(io.out, r);
      else io.out(!r.snoozed ? `job ${id}: notifications on` : r.untilRecovery ? `job ${id}: notifications snoozed until it recovers` : `job ${id}: notifications snoozed until ${instant(r.until)}`);
      return 0;
    }
    case 'badge': {
      const id = idOf(parsed, 'a job', JOBS_USAGE);
      if (values.revoke === true) {
        const r = await api<{ revoked: boolean }>('cron_badge_revoke', { id });
        if (asJson) json(io.out, r);
        else io.out(r.revoked ? `job ${id}: badge revoked; its URL answers 404 now` : `job ${id} has no badge`);
        return 0;
      }
      const badge = await api<{ url: string | null; path: string; markdown: string | null }>('cron_badge', { id });
      if (asJson) json(io.out, badge);
      else {
        io.out(badge.url ?? badge.path);
        if (badge.markdown) io.out(badge.markdown);
      }
      return 0;
    }
    case 'enable':
      return action('cron_enable', 'enabled');
    case 'disable':
      return action('cron_disable', 'disabled');
    default:
      throw new UsageError(`unknown jobs command '${verb}'`, JOBS_USAGE);
  }
}
