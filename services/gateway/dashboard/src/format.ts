/**
 * Pure helpers that turn the API's values into text for the page. No DOM here: the unit tests
 * run them under Node.
 */

/** The API's job status codes (docs/api.md, "The record"). */
const STATUS_TEXT: Record<number, string> = {
  0: 'enabled',
  1: 'disabled',
  4: 'disabled (failures)',
  5: 'paused',
  6: 'stopped',
};

/** The status filter's groups: what an owner asks for is "which are running, paused, off". */
export type StatusGroup = 'enabled' | 'paused' | 'disabled';

export const statusText = (status: number) => STATUS_TEXT[status] ?? `status ${status}`;

export function statusGroup(status: number): StatusGroup {
  if (status === 0) return 'enabled';
  if (status === 5) return 'paused';
  return 'disabled';
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A Unix time (seconds) as "YYYY-MM-DD HH:MM:SS" in a time zone (default: the browser's), or
 * "-" when there is none. A fixed format, so a list of times lines up and sorts by eye.
 */
export function formatTime(unixSeconds: number | null | undefined, timeZone?: string): string {
  if (unixSeconds === null || unixSeconds === undefined || !Number.isFinite(unixSeconds) || unixSeconds <= 0) return '-';
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(unixSeconds * 1000));
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')}`;
}

/** A duration in seconds as "850 ms", "2.4 s" or "3 min 5 s". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '-';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${(Math.round(seconds * 10) / 10).toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${pad(whole % 60)} s`;
}

/**
 * How late a run started: its actual start minus its scheduled time, both Unix seconds. The API
 * gives both to the second, so less than a second shows as "on time".
 */
export function formatLateness(scheduled: number, started: number): string {
  if (!scheduled || !started) return '-';
  const late = started - scheduled;
  if (late <= 0) return 'on time';
  return `+${formatDuration(late)}`;
}

/** Text cut to `max` characters (with an ellipsis), whitespace runs folded, for table cells. */
export function excerpt(text: string | null | undefined, max = 120): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A log entry's `result`, as cron_logs answers it. */
export interface LogResult {
  id: number;
  time: number;
  startTime: number;
  status: number;
  httpStatus: number;
  error: string;
  output: string;
  executionTime: number;
  attempt: number;
  willRetry: boolean;
  downloaded?: number;
  ip?: string;
  server?: string;
  manual?: boolean;
  lateness?: number;
}

export const resultText = (r: Pick<LogResult, 'status' | 'willRetry'>) =>
  r.status === 0 ? 'succeeded' : r.status === 2 ? 'skipped' : r.willRetry ? 'failed, will retry' : 'failed';

/** One line for a run: "succeeded (HTTP 200)", "failed: connect ECONNREFUSED". */
export function resultSummary(r: Pick<LogResult, 'status' | 'willRetry' | 'httpStatus' | 'error'>): string {
  const http = r.httpStatus ? ` (HTTP ${r.httpStatus})` : '';
  // The executor's error for a bad status is the status itself ("HTTP 500"): said once is enough.
  const error = r.status !== 0 && r.error && r.error !== `HTTP ${r.httpStatus}` ? `: ${excerpt(r.error, 80)}` : '';
  return `${resultText(r)}${http}${error}`;
}

/** A job record as cron_list and cron_get answer it (the fields the pages read). */
export interface JobRecord {
  id: number;
  name: string;
  url: string;
  expression: string;
  timezone: string;
  group: number | null;
  status: number;
  fail: number;
  nextRun: number | null;
  [setting: string]: unknown;
}

/** Does a job match the text filter (id, name, URL, expression) and the group and status choices? */
export function matches(job: JobRecord, filter: { text: string; group: string; status: string }): boolean {
  const text = filter.text.trim().toLowerCase();
  if (text && ![String(job.id), job.name, job.url, job.expression].some((v) => v.toLowerCase().includes(text))) return false;
  if (filter.group === 'none' && job.group !== null) return false;
  if (filter.group !== '' && filter.group !== 'none' && String(job.group) !== filter.group) return false;
  return filter.status === '' || statusGroup(job.status) === filter.status;
}
