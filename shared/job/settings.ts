import { AppError } from '../errors.ts';
import { DST_GAP_RULES, DST_OVERLAP_RULES } from '../schedule/index.ts';

/**
 * The one definition of a cron job's settings. Every other list of settings is derived from the
 * SETTINGS table below: the gateway's parameters (inputs.ts) and job records (records.ts), the
 * OpenAPI document, the proto mapping both ways (shared/grpc/jobSettingsProto.ts), defaults and
 * validation (resolveSettings), history masking and version diffs (secret rows), the planner's
 * re-plan and re-target rules and its due-run snapshot, the executor's RunJob.
 *
 * Adding a setting: one row here (a kind, its doc line, default, rule and flags), and the field
 * of the same name in proto `JobSettings` (optional) and `CronJob` (and `RunTarget` when the row
 * is `target`), then `npm run gen`. test/unit/job/settingsTable.test.ts fails until the table and
 * the proto messages agree. Jobs created before the setting existed fold with its default.
 * A new kind (a list, say) also needs its entry in the per-kind tables: gateway/inputs.ts (READ),
 * gateway/records.ts (RECORD), shared/grpc/jobSettingsProto.ts (TO_PROTO, FROM_PROTO), gateway/
 * openapiSchema.ts (SETTING_TYPE) and the test's WIRE; the compiler lists them (Record<SettingKind, ...>).
 *
 * A row's key is the setting's name everywhere: the API parameter, the domain field, and (in
 * camelCase, as protobuf-es spells it) the proto field. Pure: no transport, no generated code.
 */

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * How a setting travels. The domain value, the proto value and the API record value follow from it:
 * - text: string / proto string / string.
 * - int: number / proto int32 / number.
 * - bool: boolean / proto bool / boolean.
 * - optionalInt: number | null / proto optional int32, 0 on input clears / number | null.
 * - ref: an id or null / proto optional int64, 0 on input clears / number | null.
 */
export type SettingKind = 'text' | 'int' | 'bool' | 'optionalInt' | 'ref';

export interface Limits {
  min?: number;
  max?: number;
  maxLength?: number;
  oneOf?: readonly string[];
  pattern?: string;
}

export interface Setting<T> {
  readonly kind: SettingKind;
  /** One line for users (the OpenAPI description). */
  readonly doc: string;
  /** The limits `check` enforces, for documents that state them (OpenAPI): not a second source of rules. */
  readonly limits?: Limits;
  /** The value of a new job that does not give it (the account's time zone for `timezone`). */
  readonly default: T | ((accountTimezone: string) => T);
  /** Applied to a given value before the checks (trim, canonical form); may throw INVALID_PARAMETER. */
  readonly normalize?: (value: T) => T;
  /** The setting's rule, on the resolved value; throws INVALID_PARAMETER naming the setting. May return a canonical value. */
  readonly check?: (value: T, name: string) => T | void;
  /** Never returned (API record and proto `CronJob` carry `has<Name>` instead) and masked in the history. */
  readonly secret?: boolean;
  /** text only; default true. When false an empty parameter means "not given" (form clients send every field). */
  readonly clearable?: boolean;
  /** Part of the request the executor makes: copied into each due run (proto `RunTarget`), so an edit re-targets planned runs. */
  readonly target?: boolean;
  /** Part of the schedule (expression, zone, filter): an edit re-plans the job from the edit. */
  readonly schedule?: boolean;
}

const invalid = (name: string, why: string) => new AppError('INVALID_PARAMETER', why, { field: [name] });

const intRange = (min: number, max: number, unit = '') => (value: number, name: string) => {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(name, `must be a whole number from ${min} to ${max}${unit}, got ${value}`);
};

const maxLength = (max: number) => (value: string, name: string) => {
  if (value.length > max) throw invalid(name, `must be at most ${max} characters, got ${value.length}`);
};

/** A rule and the limits it enforces, from one pair of numbers. */
const range = (min: number, max: number, unit = '') => ({ check: intRange(min, max, unit), limits: { min, max } });
const length = (max: number) => ({ check: maxLength(max), limits: { maxLength: max } });

/** optionalInt and ref: a value in range, where 0 means "none". */
const zeroClears = (min: number, max: number, unit = '') => {
  const inRange = intRange(min, max, unit);
  const check = (value: number | null, name: string): number | null => {
    if (value === null) return null;
    inRange(value, name);
    return value === 0 ? null : value;
  };
  return { check, limits: { min, max } };
};

const trim = (value: string) => value.trim();

const URL_MAX = 2048;
const HEADERS_MAX = 16_384;

export const MAX_NOTIFY_CHANNELS = 50;

/** notifyChannels: channel ids, comma-separated, in canonical form ("3,7"); empty: every channel. */
function normalizeChannelList(raw: string): string {
  const parts = raw.split(',').map((p) => p.trim()).filter(Boolean);
  const ids = parts.map((p) => {
    if (!/^\d{1,15}$/.test(p) || Number(p) < 1) throw invalid('notifyChannels', `must be channel ids separated by commas (e.g. 3,7), got "${raw.slice(0, 60)}"`);
    return Number(p);
  });
  if (ids.length > MAX_NOTIFY_CHANNELS) throw invalid('notifyChannels', `at most ${MAX_NOTIFY_CHANNELS} channels, got ${ids.length}`);
  return [...new Set(ids)].sort((a, b) => a - b).join(',');
}

/** FC: a URL without a scheme gets http://. Only http(s) targets with a host are accepted. */
export function normalizeUrl(raw: string): string {
  const trimmed = raw.trim();
  if (!trimmed) throw invalid('url', 'must not be empty');
  maxLength(URL_MAX)(trimmed, 'url');
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw invalid('url', `"${raw}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url', `scheme must be http or https, got ${url.protocol.slice(0, -1)}`);
  if (!url.hostname) throw invalid('url', 'must name a host');
  return withScheme;
}

/** A choice from a fixed list, case-insensitive; the error lists the choices. */
const choice = (choices: readonly string[]) => ({
  normalize: (raw: string) => String(raw).trim().toLowerCase(),
  check: (value: string, name: string) => {
    if (!choices.includes(value)) throw invalid(name, `must be one of ${choices.join(', ')}, got "${String(value).slice(0, 60)}"`);
  },
  limits: { oneOf: choices },
});

function normalizeMethod(raw: HttpMethod): HttpMethod {
  const method = String(raw).toUpperCase() as HttpMethod;
  if (!HTTP_METHODS.includes(method)) throw invalid('httpMethod', `must be one of ${HTTP_METHODS.join(', ')}, got "${raw}"`);
  return method;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function checkHeaders(headers: string, name: string) {
  maxLength(HEADERS_MAX)(headers, name);
  headers.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const colon = line.indexOf(':');
    if (colon <= 0 || !HEADER_NAME.test(line.slice(0, colon).trim())) {
      throw invalid(name, `line ${i + 1} must look like "Name: value", got "${line.slice(0, 60)}"`);
    }
  });
}

/** A row maker per kind: keeps the row's literal flags in its type and tags it with its value type. */
function define<K extends SettingKind, T>(kind: K) {
  return <const R extends Omit<Setting<T>, 'kind'>>(row: R) => ({ kind, ...row }) as unknown as R & { readonly kind: K; readonly value?: T };
}
const text = define<'text', string>('text');
const method = define<'text', HttpMethod>('text');
const int = define<'int', number>('int');
const bool = define<'bool', boolean>('bool');
const optionalInt = define<'optionalInt', number | null>('optionalInt');
const ref = define<'ref', number | null>('ref');

/**
 * Every setting of a cron job (FastCron's cron_add fields), in the order the API record lists
 * them. The checks run in this order too, after the normalizations; the schedule itself (the
 * expression in its zone with its filter) is compiled last, by resolveSettings.
 */
export const SETTINGS = {
  group: ref({ doc: 'group id; 0 or null: none', default: null, ...zeroClears(0, Number.MAX_SAFE_INTEGER) }),
  name: text({ doc: 'job name', default: '', ...length(255) }),
  expression: text({ doc: 'when: crontab (with R and H), English interval, one-time date, @unix or manual (docs/schedule.md)', default: '15 minutes', normalize: trim, ...length(255), clearable: false, schedule: true }),
  filter: text({ doc: 'condition over minute, hour, day, month, weekday', default: '', normalize: trim, ...length(1024), schedule: true }),
  timezone: text({ doc: "IANA time zone; default: the account's", default: (accountTimezone) => accountTimezone, normalize: trim, clearable: false, schedule: true }),
  // Tock's: the job's own rule for local times a DST change skips or repeats (crontabs only).
  dstGap: text({ doc: "crontab times a DST change skips: classic (cron's rule), shift (run once at the jump) or skip", default: 'classic', ...choice(DST_GAP_RULES), clearable: false, schedule: true }),
  dstOverlap: text({ doc: 'crontab times a DST change repeats: classic (cron\'s rule), first, last or both passes', default: 'classic', ...choice(DST_OVERLAP_RULES), clearable: false, schedule: true }),
  url: text({ doc: 'http(s) URL to call; without a scheme http:// is assumed', default: '', normalize: normalizeUrl, limits: { maxLength: URL_MAX }, clearable: false, target: true }),
  httpMethod: method({ doc: 'HTTP method', default: 'GET', normalize: normalizeMethod, limits: { oneOf: HTTP_METHODS }, clearable: false, target: true }),
  postData: text({ doc: 'request body (POST, PUT, PATCH)', default: '', ...length(65_536), target: true }),
  httpHeaders: text({ doc: 'request headers, "Name: value" lines', default: '', check: checkHeaders, limits: { maxLength: HEADERS_MAX }, target: true }),
  username: text({ doc: 'Basic auth user', default: '', ...length(255), target: true }),
  password: text({ doc: 'Basic auth password (never returned)', default: '', ...length(255), secret: true, target: true }),
  userAgent: text({ doc: 'User-Agent header', default: '', ...length(512), target: true }),
  timeout: int({ doc: 'seconds for the whole request', default: 30, ...range(5, 7200, ' seconds'), target: true }),
  instances: int({ doc: 'runs in flight at most (0: no limit); beyond it a run is skipped', default: 0, ...range(0, 5), target: true }),
  delay: int({ doc: 'random delay of each run, 0..delay minutes', default: 0, ...range(0, 1440, ' minutes') }),
  notify: bool({ doc: 'notify on failure', default: true }),
  notifyEvery: int({ doc: 'notify on every n-th consecutive failure', default: 1, ...range(1, 100) }),
  notifyMatch: text({ doc: "notify when the output contains it (or, with a leading '!', does not)", default: '', ...length(255) }),
  notifyTime: optionalInt({ doc: 'notify when a run takes longer than this many seconds (0 or null: off)', default: null, ...zeroClears(0, 86_400, ' seconds') }),
  // Tock's: notify the flapping job that never reaches notifyEvery consecutive failures (shared/notify/failureRate.ts).
  notifyFailureRate: optionalInt({ doc: 'notify when at least this percent of the runs in the last notifyFailureWindow minutes failed (0 or null: off)', default: null, ...zeroClears(0, 100, ' percent') }),
  notifyFailureWindow: int({ doc: 'the window of notifyFailureRate, minutes', default: 60, ...range(1, 1440, ' minutes') }),
  // Tock's: while a failure lasts, a reminder at the first failed run this long after it was last notified (shared/notify/followUps.ts).
  notifyReminder: optionalInt({ doc: 'while the job stays failing, remind every this many hours (0 or null: off)', default: null, ...zeroClears(0, 168, ' hours') }),
  // Tock's: runs not made on time for a reason Tock knows (instances, fair share, account disabled, downtime).
  notifySkipped: bool({ doc: 'notify when a run is skipped (instances, fair share, account disabled) or missed after downtime', default: false }),
  failureThreshold: int({ doc: 'consecutive failures before the job is disabled (status 4)', default: 20, ...range(1, 100) }),
  notifyChannels: text({ doc: 'channel ids this job notifies, comma-separated (e.g. "3,7"); empty: every channel of the account', default: '', normalize: normalizeChannelList, limits: { pattern: '^[0-9, ]*$' } }),
  keyword: text({ doc: 'the run fails unless the output contains it', default: '', ...length(100), target: true }),
  pattern: text({ doc: 'the run fails if the output contains it', default: '', ...length(255), target: true }),
  // Tock's: attempts after a failed call that may pass, and the base of their backoff (services/executor/retryPolicy.ts).
  retries: int({ doc: 'attempts after a failed call that may pass (connection error, timeout, 5xx, 429)', default: 0, ...range(0, 10), target: true }),
  retryBackoff: int({ doc: 'base of the exponential backoff between attempts, seconds (full jitter, capped at 1 hour)', default: 10, ...range(1, 3600, ' seconds'), target: true }),
} as const;

type Table = typeof SETTINGS;
export type SettingName = keyof Table;
type ValueOf<S> = S extends { readonly value?: infer T } ? T : never;

/** Every settable field of a cron job, fully resolved. */
export type JobSettings = { -readonly [K in SettingName]: ValueOf<Table[K]> };
/** Some settings: absent means "default" on create and "unchanged" on edit. */
export type SettingsInput = Partial<JobSettings>;

type Flagged<F extends 'target' | 'schedule' | 'secret'> = { [K in SettingName]: Table[K] extends { readonly [P in F]: true } ? K : never }[SettingName];
export type TargetName = Flagged<'target'>;
export type ScheduleName = Flagged<'schedule'>;
/** The settings an executor needs to make the request (the due run's target). */
export type TargetSettings = Pick<JobSettings, TargetName>;

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** A row of the table, typed loosely for code that walks all of them. */
export const settingOf = (name: SettingName) => SETTINGS[name] as Setting<unknown>;

const named = (flag: 'target' | 'schedule' | 'secret') => SETTING_NAMES.filter((name) => settingOf(name)[flag] === true);
export const TARGET_SETTINGS = named('target') as TargetName[];
export const SCHEDULE_SETTINGS = named('schedule') as ScheduleName[];
export const SECRET_SETTINGS = named('secret');

/** The name a secret setting is reported under (`password` -> `hasPassword`). */
export const secretFlag = (name: string) => `has${name[0]!.toUpperCase()}${name.slice(1)}`;

const defaultOf = (name: SettingName, accountTimezone: string) => {
  const d = settingOf(name).default;
  return typeof d === 'function' ? (d as (tz: string) => unknown)(accountTimezone) : d;
};

/** The resolved settings of a new job before its input is applied (the url has no default: it is required). */
export function defaultSettings(accountTimezone: string): JobSettings {
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) out[name] = defaultOf(name, accountTimezone);
  return out as JobSettings;
}

/**
 * The settings a job was created with, with the default of every setting added since: a stream
 * written before a setting existed folds into a job that has it. The same object when complete.
 */
export function completeSettings(settings: JobSettings): JobSettings {
  let out: Record<string, unknown> | null = null;
  for (const name of SETTING_NAMES) {
    if (settings[name] !== undefined) continue;
    out ??= { ...settings };
    out[name] = defaultOf(name, settings.timezone ?? 'UTC');
  }
  return (out as JobSettings | null) ?? settings;
}

/**
 * A function copying `keys` of an object into a fresh object literal of one fixed shape. Built
 * once per key list: objects built property by property or with spreads take V8 two to four times
 * the memory of a literal, and the planner keeps a million job settings while the executor copies
 * a run's target for every run.
 */
export function literalCopier<K extends string>(keys: readonly K[]): <T extends Record<K, unknown>>(source: T) => Pick<T, K> {
  for (const key of keys) if (!/^[A-Za-z_$][\w$]*$/.test(key)) throw new Error(`not an identifier: ${key}`);
  // Keys are this module's own identifiers (checked above), never input.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- a generated copier is the point: monomorphic and fast on the hot path
  return new Function('s', `return { ${keys.map((k) => `${k}: s.${k}`).join(', ')} };`) as never;
}

/** A copy of the settings as one fixed-shape literal (see literalCopier). */
export const compactSettings: (s: JobSettings) => JobSettings = literalCopier(SETTING_NAMES);
/** The settings the executor needs, as one fixed-shape literal. */
export const targetOf: (s: TargetSettings) => TargetSettings = literalCopier(TARGET_SETTINGS);
