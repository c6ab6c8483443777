/**
 * The logs read model port (cron_logs, cron_show, cron_failures). Adapters: SQLite (one file per
 * process, the embedded default) and PostgreSQL (one database any number of logs replicas share).
 * One contract suite (test/contract/logsViewContract.ts) runs against both.
 *
 * Disposable: it holds only what the EXECUTIONS stream holds, so an empty one is rebuilt by
 * replaying the stream. Retention keeps the newest results of each job by (scheduled time, id),
 * the order the log is shown in, so the result does not depend on the order executions arrive in.
 */
import type { Execution, ExecutionOutcome } from '../../shared/gen/tock/v1/events_pb.ts';

/** The meta key holding the highest entry id ever given (ids are never given twice, even once pruned). */
export const MAX_ID_KEY = 'max_id';

export interface LogsViewOptions {
  /** Results kept per job in the log (1000 by default, a server setting). */
  keepPerJob?: number;
  /** Failures kept per job, apart from the log, so a flood of successes cannot push them out. */
  keepFailuresPerJob?: number;
}

export interface LogsQuery {
  accountId: bigint | number;
  /** 0 or absent: every job of the account (cron_failures without id). */
  jobId?: bigint | number;
  failuresOnly?: boolean;
  /** Case-insensitive substring of output, error, IP, HTTP status or run time; '' matches all. */
  keyword?: string;
  /** 1-based. */
  page?: number;
  /** Default 100, at most 1000. */
  limit?: number;
}

export interface LogsEntry {
  id: number;
  execution: Execution;
}

export interface RecordInput {
  execution: Execution;
  /** The result id to use when free (the service passes the stream sequence, so ids survive a rebuild). */
  id?: number;
  /** The execution's bytes as received, stored as they are (no second encoding, unknown fields kept). */
  data?: Uint8Array;
}

export interface SummariesQuery {
  accountId: bigint | number;
  jobIds: readonly (bigint | number)[];
  /** How many of the newest outcomes per job (at most 100). */
  recent: number;
  /** Runs scheduled at or after this Unix second are counted. */
  since: number;
  /** Also counted per hour: `count` hours (at most SUMMARY_HOURS_MAX) from `from` (a Unix second). */
  hours?: { from: number; count: number };
}

/** A job's health from the log it keeps: one per asked job, in the order asked. */
export interface JobSummary {
  jobId: bigint;
  last?: LogsEntry;
  /** Newest first. */
  recent: ExecutionOutcome[];
  runsSince: number;
  failuresSince: number;
  /** Per asked hour, oldest first (empty when none were asked). */
  runsByHour: number[];
  failuresByHour: number[];
}

/** At most this many outcomes per job in a summary. */
export const SUMMARY_RECENT_MAX = 100;
/** At most this many hourly counts per job in a summary: a week. */
export const SUMMARY_HOURS_MAX = 168;

/** The asked hours, bounded: whole seconds, 0 to SUMMARY_HOURS_MAX of them. */
export function summaryHours(hours: SummariesQuery['hours']): { from: number; count: number } {
  const count = Math.max(0, Math.min(SUMMARY_HOURS_MAX, Math.trunc(hours?.count ?? 0) || 0));
  return { from: Math.trunc(hours?.from ?? 0) || 0, count };
}

/** Rows of (hour index, runs, failures) spread into two arrays of `count` counts. */
export function hourlyCounts(count: number, rows: Iterable<{ h: number; runs: number; failures: number }>) {
  const runsByHour = new Array<number>(count).fill(0);
  const failuresByHour = new Array<number>(count).fill(0);
  for (const r of rows) {
    if (r.h < 0 || r.h >= count) continue;
    runsByHour[r.h] = r.runs;
    failuresByHour[r.h] = r.failures;
  }
  return { runsByHour, failuresByHour };
}

export interface LogsView {
  readonly keepPerJob: number;
  readonly keepFailuresPerJob: number;
  /** Records one execution; false when its run id is already held (a redelivery). */
  record(execution: Execution, options?: { id?: number }): Promise<boolean>;
  /** Records many in one transaction (all or none); one flag per input, false for a duplicate. */
  recordMany(batch: RecordInput[]): Promise<boolean[]>;
  /** Newest first (scheduled time, then id), scoped to the account: another account's results never show. */
  query(q: LogsQuery): Promise<LogsEntry[]>;
  /** Each asked job's newest result, newest outcomes and counts since an instant, scoped to the account. */
  summaries(q: SummariesQuery): Promise<JobSummary[]>;
  /** Rows held, for tests and metrics. */
  size(): Promise<{ log: number; failures: number }>;
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  /** Stores `value` under `key` unless a value is there already; returns the one that stays (first writer wins). */
  claimMeta(key: string, value: string): Promise<string>;
  close(): Promise<void>;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** An id from a query as a 64-bit integer: nonsense becomes 0 and out-of-range is clamped, so it matches nothing. */
export function queryInt(v: bigint | number | undefined): bigint {
  const n = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : 0n;
  return n > INT64_MAX ? INT64_MAX : n < INT64_MIN ? INT64_MIN : n;
}

/** A retention setting: a whole number of at least 1, or the default. */
export function keepSetting(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`logs view: ${name} must be a whole number of at least 1, got ${value}`);
  return value;
}
