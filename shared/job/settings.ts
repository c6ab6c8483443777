import { AppError } from '../errors.ts';

/**
 * The one definition of a cron job's settings. Every other list of settings (the gateway's
 * parameters and records, the jobs service's proto mapping, validation, the planner's snapshot for
 * executors) is derived from the SETTINGS table below, so adding a setting is one row here plus
 * one field in proto `JobSettings` (and `CronJob`, and `RunTarget` if the executor needs it); a
 * unit test checks the table and the proto messages list the same fields.
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

export interface Setting<T> {
  readonly kind: SettingKind;
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

const invalid = (name: string, why: string) => new AppError('INVALID_PARAMETER', `${name}: ${why}`);

const intRange = (min: number, max: number, unit = '') => (value: number, name: string) => {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(name, `must be a whole number from ${min} to ${max}${unit}, got ${value}`);
};

const maxLength = (max: number) => (value: string, name: string) => {
  if (value.length > max) throw invalid(name, `must be at most ${max} characters, got ${value.length}`);
};

/** optionalInt and ref: a value in range, where 0 means "none". */
const zeroClears = (min: number, max: number, unit = '') => {
  const range = intRange(min, max, unit);
  return (value: number | null, name: string): number | null => {
    if (value === null) return null;
    range(value, name);
    return value === 0 ? null : value;
  };
};

const trim = (value: string) => value.trim();

/** FC: a URL without a scheme gets http://. Only http(s) targets with a host are accepted. */
export function normalizeUrl(raw: string): string {
  const trimmed = raw.trim();
  if (!trimmed) throw invalid('url', 'must not be empty');
  maxLength(2048)(trimmed, 'url');
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

function normalizeMethod(raw: HttpMethod): HttpMethod {
  const method = String(raw).toUpperCase() as HttpMethod;
  if (!HTTP_METHODS.includes(method)) throw invalid('httpMethod', `must be one of ${HTTP_METHODS.join(', ')}, got "${raw}"`);
  return method;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function checkHeaders(headers: string, name: string) {
  maxLength(16_384)(headers, name);
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
  group: ref({ default: null, check: zeroClears(0, Number.MAX_SAFE_INTEGER) }),
  name: text({ default: '', check: maxLength(255) }),
  expression: text({ default: '15 minutes', normalize: trim, check: maxLength(255), clearable: false, schedule: true }),
  filter: text({ default: '', normalize: trim, check: maxLength(1024), schedule: true }),
  timezone: text({ default: (accountTimezone) => accountTimezone, normalize: trim, clearable: false, schedule: true }),
  url: text({ default: '', normalize: normalizeUrl, clearable: false, target: true }),
  httpMethod: method({ default: 'GET', normalize: normalizeMethod, clearable: false, target: true }),
  postData: text({ default: '', check: maxLength(65_536), target: true }),
  httpHeaders: text({ default: '', check: checkHeaders, target: true }),
  username: text({ default: '', check: maxLength(255), target: true }),
  password: text({ default: '', check: maxLength(255), secret: true, target: true }),
  userAgent: text({ default: '', check: maxLength(512), target: true }),
  timeout: int({ default: 30, check: intRange(5, 7200, ' seconds'), target: true }),
  instances: int({ default: 0, check: intRange(0, 5), target: true }),
  delay: int({ default: 0, check: intRange(0, 1440, ' minutes') }),
  notify: bool({ default: true }),
  notifyEvery: int({ default: 1, check: intRange(1, 100) }),
  notifyMatch: text({ default: '', check: maxLength(255) }),
  notifyTime: optionalInt({ default: null, check: zeroClears(0, 86_400, ' seconds') }),
  failureThreshold: int({ default: 20, check: intRange(1, 100) }),
  keyword: text({ default: '', check: maxLength(100), target: true }),
  pattern: text({ default: '', check: maxLength(255), target: true }),
  // Tock's: attempts after a failed call, and the base of their backoff (see services/executor/retryPolicy.ts).
  retries: int({ default: 0, check: intRange(0, 10), target: true }),
  retryBackoff: int({ default: 10, check: intRange(1, 3600, ' seconds'), target: true }),
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
const named = (flag: 'target' | 'schedule' | 'secret') => SETTING_NAMES.filter((name) => (SETTINGS[name] as Setting<unknown>)[flag] === true);
export const TARGET_SETTINGS = named('target') as TargetName[];
export const SCHEDULE_SETTINGS = named('schedule') as ScheduleName[];
export const SECRET_SETTINGS = named('secret');

/** A row of the table, typed loosely for code that walks all of them. */
export const settingOf = (name: SettingName) => SETTINGS[name] as Setting<unknown>;

/** The name a secret setting is reported under (`password` -> `hasPassword`). */
export const secretFlag = (name: string) => `has${name[0]!.toUpperCase()}${name.slice(1)}`;

/** The resolved settings of a new job before its input is applied (the url has no default: it is required). */
export function defaultSettings(accountTimezone: string): JobSettings {
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const d = settingOf(name).default;
    out[name] = typeof d === 'function' ? (d as (tz: string) => unknown)(accountTimezone) : d;
  }
  return out as JobSettings;
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
  return new Function('s', `return { ${keys.map((k) => `${k}: s.${k}`).join(', ')} };`) as never;
}

/** A copy of the settings as one fixed-shape literal (see literalCopier). */
export const compactSettings: (s: JobSettings) => JobSettings = literalCopier(SETTING_NAMES);
/** The settings the executor needs, as one fixed-shape literal. */
export const targetOf: (s: TargetSettings) => TargetSettings = literalCopier(TARGET_SETTINGS);
