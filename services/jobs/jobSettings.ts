import { AppError } from '../../shared/errors.ts';
import { checkFires, parseSchedule, ScheduleError, type Schedule } from '../../shared/schedule/index.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Every settable field of a cron job (spec 4.3), fully resolved. */
export interface JobSettings {
  url: string;
  expression: string;
  filter: string;
  delay: number;
  timezone: string;
  timeout: number;
  instances: number;
  username: string;
  password: string;
  httpMethod: HttpMethod;
  postData: string;
  httpHeaders: string;
  userAgent: string;
  notify: boolean;
  notifyEvery: number;
  notifyMatch: string;
  notifyTime: number | null;
  failureThreshold: number;
  keyword: string;
  pattern: string;
  group: number | null;
  name: string;
}

export type SettingsInput = Partial<JobSettings>;

/** DECISIONS 4: the spec's "X or Y" defaults resolved. */
export const defaultSettings = (timezone: string): Omit<JobSettings, 'url'> => ({
  expression: '15 minutes',
  filter: '',
  delay: 0,
  timezone,
  timeout: 30,
  instances: 0,
  username: '',
  password: '',
  httpMethod: 'GET',
  postData: '',
  httpHeaders: '',
  userAgent: '',
  notify: true,
  notifyEvery: 1,
  notifyMatch: '',
  notifyTime: null,
  failureThreshold: 20,
  keyword: '',
  pattern: '',
  group: null,
  name: '',
});

const invalid = (field: string, why: string) => new AppError('INVALID_PARAMETER', `${field}: ${why}`);

const intRange = (field: string, value: number, min: number, max: number, unit = '') => {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(field, `must be a whole number from ${min} to ${max}${unit}, got ${value}`);
  }
};

const maxLength = (field: string, value: string, max: number) => {
  if (value.length > max) throw invalid(field, `must be at most ${max} characters, got ${value.length}`);
};

/** FC: a URL without a scheme gets http://. Only http(s) targets with a host are accepted. */
export function normalizeUrl(raw: string): string {
  const trimmed = raw.trim();
  if (!trimmed) throw invalid('url', 'must not be empty');
  maxLength('url', trimmed, 2048);
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

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function checkHeaders(headers: string) {
  maxLength('httpHeaders', headers, 16_384);
  headers.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    const colon = line.indexOf(':');
    if (colon <= 0 || !HEADER_NAME.test(line.slice(0, colon).trim())) {
      throw invalid('httpHeaders', `line ${i + 1} must look like "Name: value", got "${line.slice(0, 60)}"`);
    }
  });
}

/** Validates the schedule triple; errors name the field the schedule module blames. */
export function compileSchedule(settings: Pick<JobSettings, 'expression' | 'timezone' | 'filter'>, jobId: number): Schedule {
  try {
    return parseSchedule({ expression: settings.expression, timezone: settings.timezone, filter: settings.filter || null, jobId });
  } catch (error) {
    if (error instanceof ScheduleError) throw invalid(error.field, error.message);
    throw error;
  }
}

/**
 * Applies `input` over `base` and checks every rule of spec 4.3 / DECISIONS 4. Pure: returns the
 * resolved settings or throws AppError('INVALID_PARAMETER') naming the parameter and the rule.
 * With `now`, a schedule the input sets must also fire within a year of it (checkFires).
 */
export function resolveSettings(base: JobSettings, input: SettingsInput, jobId: number, now?: number): JobSettings {
  const s: JobSettings = { ...base };
  for (const [key, value] of Object.entries(input) as [keyof JobSettings, unknown][]) {
    if (value !== undefined) (s as any)[key] = value;
  }
  if (input.url !== undefined) s.url = normalizeUrl(input.url);
  if (input.httpMethod !== undefined) {
    const method = String(input.httpMethod).toUpperCase() as HttpMethod;
    if (!HTTP_METHODS.includes(method)) throw invalid('httpMethod', `must be one of ${HTTP_METHODS.join(', ')}, got "${input.httpMethod}"`);
    s.httpMethod = method;
  }
  if (input.expression !== undefined) s.expression = input.expression.trim();
  if (input.filter !== undefined) s.filter = input.filter.trim();
  if (input.timezone !== undefined) s.timezone = input.timezone.trim();
  intRange('delay', s.delay, 0, 1440, ' minutes');
  intRange('timeout', s.timeout, 5, 7200, ' seconds');
  intRange('instances', s.instances, 0, 5);
  intRange('notifyEvery', s.notifyEvery, 1, 100);
  intRange('failureThreshold', s.failureThreshold, 1, 100);
  if (s.notifyTime !== null) {
    intRange('notifyTime', s.notifyTime, 0, 86_400, ' seconds');
    if (s.notifyTime === 0) s.notifyTime = null;
  }
  if (s.group !== null) {
    intRange('group', s.group, 0, Number.MAX_SAFE_INTEGER);
    if (s.group === 0) s.group = null;
  }
  maxLength('keyword', s.keyword, 100);
  maxLength('pattern', s.pattern, 255);
  maxLength('name', s.name, 255);
  maxLength('username', s.username, 255);
  maxLength('password', s.password, 255);
  maxLength('userAgent', s.userAgent, 512);
  maxLength('notifyMatch', s.notifyMatch, 255);
  maxLength('postData', s.postData, 65_536);
  maxLength('expression', s.expression, 255);
  maxLength('filter', s.filter, 1024);
  checkHeaders(s.httpHeaders);
  const schedule = compileSchedule(s, jobId);
  if (now !== undefined && (input.expression !== undefined || input.filter !== undefined || input.timezone !== undefined)) {
    try {
      checkFires(schedule, now);
    } catch (error) {
      if (error instanceof ScheduleError) throw invalid(error.field, error.message);
      throw error;
    }
  }
  return s;
}
