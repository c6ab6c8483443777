/**
 * The pure rules of the logs read model: paging bounds, what a keyword is searched in, and which
 * executions are fit to record. No SQLite, no bus: the view and the service apply these.
 */

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** Bounds the offset so it stays an exact integer SQLite accepts, whatever page a caller sends. */
const MAX_PAGE = 2 ** 31;
const MAX_RUN_ID = 512;
/** Separates fields in the search text, so a keyword cannot match across two of them. */
export const FIELD_SEPARATOR = '\u001f';
/** Date's range: beyond it an instant has no ISO text. */
const MAX_DATE_SECONDS = 8.64e12;

/** 1-based page and a limit (default 100, at most 1000) as SQL LIMIT/OFFSET; nonsense becomes the default. */
export function limitOffset(page?: number, limit?: number): { limit: number; offset: number } {
  const l = Number.isFinite(limit) && limit! >= 1 ? Math.min(Math.floor(limit!), MAX_LIMIT) : DEFAULT_LIMIT;
  const p = Number.isFinite(page) && page! >= 1 ? Math.min(Math.floor(page!), MAX_PAGE) : 1;
  return { limit: l, offset: (p - 1) * l };
}

/** The keyword as searched: lower case (full Unicode folding, not SQLite's ASCII-only lower()); '' means no filter. */
export const normalizeKeyword = (keyword?: string): string => (typeof keyword === 'string' ? unseparated(keyword).toLowerCase() : '');

/** The separator inside a field or a keyword reads as a space: so a match never spans two fields. */
const unseparated = (text: string) => (text.includes(FIELD_SEPARATOR) ? text.replaceAll(FIELD_SEPARATOR, ' ') : text);

/** The run time as people write it: ISO-8601 UTC and the same with a space, e.g. 2024-10-16T08:30:00Z and 2024-10-16 08:30:00. */
export function timeTexts(seconds: bigint): string[] {
  const s = Number(seconds);
  if (!(Math.abs(s) <= MAX_DATE_SECONDS)) return [];
  const iso = new Date(s * 1000).toISOString().slice(0, 19); // seconds precision: `time` is whole seconds
  return [`${iso}Z`, iso.replace('T', ' ')];
}

export interface Searchable {
  output: string;
  error: string;
  ip: string;
  httpStatus: number;
  time: bigint;
}

/**
 * Everything a keyword is matched against (docs/api.md (What every call to your URL carries): output, error, IP address, HTTP status and
 * the run time, as Unix seconds and as ISO text), lower-cased once at write time so a search is a
 * plain substring scan in SQLite.
 */
export function searchText(e: Searchable): string {
  return [unseparated(e.output), unseparated(e.error), unseparated(e.ip), String(e.httpStatus), String(e.time), ...timeTexts(e.time)].join(FIELD_SEPARATOR).toLowerCase();
}

export interface Recordable {
  runId: string;
  jobId: bigint;
  accountId: bigint;
}

/** Why an execution cannot be recorded (it could never be found or de-duplicated), or undefined when it can. */
export function invalidExecution(e: Recordable): string | undefined {
  if (!e.runId) return 'run id is empty';
  if (e.runId.length > MAX_RUN_ID) return `run id is longer than ${MAX_RUN_ID} characters`;
  if (e.accountId <= 0n) return 'account id is missing';
  if (e.jobId <= 0n) return 'job id is missing';
  return undefined;
}
