/**
 * A job's health in an owner's words, from its record (status, fail, nextRun and Tock's health
 * additions), and relative times. Pure: the unit tests run it under Node.
 */
import type { JobRecord, LogResult } from './format.ts';

export type HealthState = 'ok' | 'failing' | 'late' | 'paused' | 'disabled' | 'disabled-failures' | 'stopped';

export const STATE_TEXT: Record<HealthState, string> = {
  ok: 'ok',
  failing: 'failing',
  late: 'late',
  paused: 'paused',
  disabled: 'disabled by you',
  'disabled-failures': 'disabled by failures',
  stopped: 'stopped',
};

/** A run this much past its time without a result, or a last run that started this late, is "late". */
export const LATE_AFTER_S = 60;

/** The health additions of a record (docs/api.md, "Job health"); null when the logs could not say. */
export interface Health {
  lastResult: LogResult | null;
  recentOutcomes: number[] | null;
  runs24h: number | null;
  failures24h: number | null;
  hourly24h: { from: number; runs: number[]; failures: number[] } | null;
  groupName: string | null;
}
export type JobWithHealth = JobRecord & Partial<Health>;

/** Which of the states a job is in, `now` in Unix seconds. A status the API sets wins; then failures, then lateness. */
export function healthState(job: JobWithHealth, now: number): HealthState {
  switch (job.status) {
    case 1:
      return 'disabled';
    case 4:
      return 'disabled-failures';
    case 5:
      return 'paused';
    case 6:
      return 'stopped';
  }
  if (job.fail > 0 || job.lastResult?.status === 1) return 'failing';
  if (job.nextRun && job.nextRun < now - LATE_AFTER_S) return 'late';
  if ((job.lastResult?.lateness ?? 0) > LATE_AFTER_S) return 'late';
  return 'ok';
}

/** "in 3 min", "2 min ago", "now": from `now` to `t` (Unix seconds). */
export function relativeTime(t: number | null | undefined, now: number): string {
  if (!t || !Number.isFinite(t)) return '-';
  const d = t - now;
  const a = Math.abs(d);
  if (a < 5) return 'now';
  const [n, unit] = a < 60 ? [Math.round(a), 's'] : a < 3600 ? [Math.round(a / 60), 'min'] : a < 86_400 ? [Math.round(a / 3600), 'h'] : [Math.round(a / 86_400), a < 2 * 86_400 ? 'day' : 'days'];
  return d > 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

/** The browser's time zone, named (the list says which zone an absolute time is in). */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** Outcome marks: newest last, so they read left to right like a timeline. */
export const outcomeMarks = (outcomes: number[] | null | undefined) => [...(outcomes ?? [])].reverse();

export type SortKey = 'name' | 'url' | 'schedule' | 'state' | 'nextRun' | 'lastRun' | 'failures' | 'fail' | 'id';

const STATE_RANK: Record<HealthState, number> = { failing: 0, 'disabled-failures': 1, late: 2, ok: 3, paused: 4, disabled: 5, stopped: 6 };

/** Sorts a copy of the jobs by a column; ties by id, so the order is stable across refreshes. */
export function sortJobs(jobs: JobWithHealth[], key: SortKey, descending: boolean, now: number): JobWithHealth[] {
  const value = (j: JobWithHealth): string | number => {
    switch (key) {
      case 'name':
        return (j.name || '').toLowerCase();
      case 'url':
        return j.url.toLowerCase();
      case 'schedule':
        return j.expression.toLowerCase();
      case 'state':
        return STATE_RANK[healthState(j, now)];
      case 'nextRun':
        return j.nextRun ?? Infinity;
      case 'lastRun':
        return j.lastResult?.time ?? -Infinity;
      case 'failures':
        return (j.recentOutcomes ?? []).filter((o) => o === 1).length;
      case 'fail':
        return j.fail;
      default:
        return j.id;
    }
  };
  const sign = descending ? -1 : 1;
  return [...jobs].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    return x < y ? -sign : x > y ? sign : a.id - b.id;
  });
}

/** The account's totals over the listed jobs: jobs by state, runs and failures of the last 24 h. */
export function totals(jobs: JobWithHealth[], now: number) {
  const byState = Object.fromEntries(Object.keys(STATE_TEXT).map((s) => [s, 0])) as Record<HealthState, number>;
  let runs = 0;
  let failures = 0;
  for (const j of jobs) {
    byState[healthState(j, now)]++;
    runs += j.runs24h ?? 0;
    failures += j.failures24h ?? 0;
  }
  return { byState, runs, failures };
}
