import type { MessageInitShape } from '@bufbuild/protobuf';
import { AppError } from '../../shared/errors.ts';
import type { JobSettingsSchema } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { SETTING_NAMES, settingOf, type SettingKind, type SettingName } from '../../shared/job/index.ts';
import { validatePayload } from '../../shared/payload.ts';
import type { Params } from './params.ts';

/**
 * The typed inputs of the API functions, read from Params and checked as far as the gateway can
 * (types, int32 ranges the wire needs); the domain rules live in the jobs service.
 */

/** Every parameter name the API knows, for the "exact camelCase spelling wins" rule. */
export const KNOWN_PARAMS = [...SETTING_NAMES, 'id', 'run', 'payload', 'token', 'page', 'limit', 'for', 'time', 'data', 'priority', 'type', 'email', 'botToken', 'chatId', 'enabled', 'version', 'versions', 'hours'];

const CANONICAL = new Map(KNOWN_PARAMS.map((name) => [name.replace(/_/g, '').toLowerCase(), name]));
/** The exact spelling of a known parameter, by its folded name (lower case, no '_'). */
export const canonicalParam = (folded: string): string | undefined => CANONICAL.get(folded);

const INT32_MAX = 2_147_483_647;
/** 9999-12-31T23:59:59Z: any larger "Unix timestamp" is a mistake, and would lose precision in ms. */
const MAX_UNIX = 253_402_300_799;

/** An integer parameter that travels as int32: out of range is error 3, not a wire failure. */
export function int32(p: Params, name: string): number | undefined {
  const v = p.int(name);
  if (v !== undefined && Math.abs(v) > INT32_MAX) throw new AppError('INVALID_PARAMETER', `${v} is out of range`, { field: [name] });
  return v;
}

/** One setting read from the parameters, by its kind; undefined when not given. */
const READ: Record<SettingKind, (p: Params, name: SettingName) => unknown> = {
  text: (p, name) => {
    // A setting with no "empty" value: an empty string means "not given" (form clients send every field).
    if (settingOf(name).clearable === false) {
      const v = p.str(name);
      return v === undefined || v.trim() === '' ? undefined : v;
    }
    return p.strOrClear(name);
  },
  int: (p, name) => int32(p, name),
  bool: (p, name) => p.bool(name),
  // JSON null clears it, as 0 does.
  optionalInt: (p, name) => (p.raw(name) === null ? 0 : int32(p, name)),
  ref: (p, name) => {
    const v = p.raw(name) === null ? 0 : p.int(name);
    if (v === undefined) return undefined;
    if (v < 0) throw new AppError('INVALID_PARAMETER', `must be a group id, or 0 for none; got ${v}`, { field: [name] });
    return BigInt(v);
  },
};

/** The cron_add parameters present in `p`, as proto settings (absent stays absent). */
export function settingsFrom(p: Params): MessageInitShape<typeof JobSettingsSchema> {
  const s: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const v = READ[settingOf(name).kind](p, name);
    if (v !== undefined) s[name] = v;
  }
  return s;
}

/** `run` (and its `payload`) on cron_add / cron_edit: an extra run, or undefined for none. */
export function extraRun(p: Params) {
  const run = p.int('run');
  const payload = p.str('payload');
  if (run !== undefined && run > MAX_UNIX) throw new AppError('INVALID_PARAMETER', `must be 1 (now) or a Unix timestamp in seconds, got ${run}`, { field: ['run'] });
  if (run === undefined || run <= 0) {
    if (payload !== undefined) validatePayload(payload, p.str('httpMethod') ?? 'POST');
    return undefined;
  }
  return { run: BigInt(run), payload };
}

/** `time` of cron_run: absent, 0 or past means now. */
export function runTime(p: Params): bigint {
  const time = p.int('time') ?? 0;
  if (time < 0 || time > MAX_UNIX) throw new AppError('INVALID_PARAMETER', `must be a Unix timestamp in seconds, got ${time}`, { field: ['time'] });
  return BigInt(time);
}

/** A required whole number from 1 (an id, a version). */
export function positive(p: Params, name: string): bigint {
  const v = p.requiredInt(name);
  if (v <= 0) throw new AppError('INVALID_PARAMETER', `must be a positive integer, got ${v}`, { field: [name] });
  return BigInt(v);
}

export const id = (p: Params): bigint => positive(p, 'id');

export function ids(p: Params): bigint[] {
  const list = p.intList('id');
  if (!list || list.length === 0) throw new AppError('MISSING_PARAMETER', 'is required (one id or a list of ids)', { field: ['id'] });
  list.forEach((v, i) => {
    if (v <= 0) throw new AppError('INVALID_PARAMETER', `must be a positive integer, got ${v}`, { field: ['id', i] });
  });
  return list.map(BigInt);
}

/** `page` (from 1) and `limit` (0: the function's default, at most maxLimit). */
export function paging(p: Params, maxLimit: number) {
  const page = p.int('page') ?? 1;
  const limit = p.int('limit') ?? 0;
  if (page < 1 || page > INT32_MAX) throw new AppError('INVALID_PARAMETER', `must be from 1 to ${INT32_MAX}, got ${page}`, { field: ['page'] });
  if (limit < 0 || limit > maxLimit) throw new AppError('INVALID_PARAMETER', `must be from 1 to ${maxLimit}, got ${limit}`, { field: ['limit'] });
  return { page, limit };
}
