/**
 * What the charts draw and what they say in words (their text alternative), from the API's
 * answers. Pure: the unit tests run it under Node.
 */
import { formatDuration, formatTime, type LogResult } from './format.ts';
import type { JobWithHealth } from './health.ts';

/** A run counts as late past this (seconds), as in the job list's "late" state. */
const LATE_S = 60;

const lateness = (r: LogResult) => r.lateness ?? (r.startTime && r.time ? Math.max(0, r.startTime - r.time) : 0);
/** When the run happened: its start, or its scheduled time when it never started (a skip). */
const when = (r: LogResult) => r.startTime || r.time;

/** uPlot's columns for a job's runs: times ascending, one column per outcome (null where another outcome is), and lateness. */
export interface RunSeries {
  x: number[];
  succeeded: (number | null)[];
  failed: (number | null)[];
  skipped: (number | null)[];
  /** Null for a skipped run: it made no call, so it was not late. */
  lateness: (number | null)[];
}

export function runSeries(results: readonly LogResult[]): RunSeries {
  const runs = [...results].sort((a, b) => when(a) - when(b) || a.id - b.id);
  const duration = (r: LogResult, status: number) => (r.status === status ? Math.max(0, r.executionTime || 0) : null);
  return {
    x: runs.map(when),
    succeeded: runs.map((r) => duration(r, 0)),
    failed: runs.map((r) => duration(r, 1)),
    skipped: runs.map((r) => duration(r, 2)),
    lateness: runs.map((r) => (r.status === 2 ? null : lateness(r))),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const most = (runs: readonly LogResult[], value: (r: LogResult) => number) => runs.reduce((best, r) => (value(r) > value(best) ? r : best));
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The duration chart in words: how many runs, their outcomes, typical and longest duration. */
export function durationSummary(results: readonly LogResult[], zone: string): string {
  if (!results.length) return 'No run yet: nothing to chart.';
  const runs = [...results].sort((a, b) => when(a) - when(b));
  const count = (s: number) => runs.filter((r) => r.status === s).length;
  const timed = runs.filter((r) => r.status !== 2);
  const longest = timed.length ? most(timed, (r) => r.executionTime || 0) : undefined;
  const parts = [
    `${plural(runs.length, 'run')} from ${formatTime(when(runs[0]!), zone)} to ${formatTime(when(runs.at(-1)!), zone)} (${zone}): ${count(0)} succeeded, ${count(1)} failed${count(2) ? `, ${count(2)} skipped` : ''}.`,
  ];
  if (longest) {
    parts.push(`Median duration ${formatDuration(median(timed.map((r) => r.executionTime || 0)))}, longest ${formatDuration(longest.executionTime)} at ${formatTime(when(longest), zone)}${longest.status === 1 ? ' (failed)' : ''}.`);
  }
  return parts.join(' ');
}

/** The lateness chart in words: typical and worst lateness, and how many runs were late. */
export function latenessSummary(results: readonly LogResult[], zone: string): string {
  const runs = results.filter((r) => r.startTime && r.status !== 2);
  if (!runs.length) return 'No call made yet: no lateness to chart.';
  const worst = most(runs, lateness);
  const late = runs.filter((r) => lateness(r) > LATE_S).length;
  const show = (s: number) => (s < 0.001 ? 'none' : formatDuration(s));
  return `Median lateness ${show(median(runs.map(lateness)))}, most ${show(lateness(worst))}${lateness(worst) > 0 ? ` at ${formatTime(worst.time, zone)}` : ''}; ${plural(late, 'run')} of ${runs.length} started more than ${LATE_S} s after its time.`;
}

/** The account's runs and failures per hour: the sum of its jobs' hourly24h (every record of one answer has the same hours). */
export interface Hourly {
  from: number;
  runs: number[];
  failures: number[];
}

export function accountHourly(jobs: readonly JobWithHealth[]): Hourly | null {
  const known = jobs.map((j) => j.hourly24h).filter((h): h is Hourly => !!h);
  const first = known[0];
  if (!first) return null;
  const sum = (key: 'runs' | 'failures') => first[key].map((_, i) => known.reduce((total, h) => total + (h.from === first.from ? (h[key][i] ?? 0) : 0), 0));
  return { from: first.from, runs: sum('runs'), failures: sum('failures') };
}

/** "14:00-15:00" in a time zone, for an hour starting at `start` (Unix seconds). */
export function hourLabel(start: number, zone: string): string {
  const hm = (t: number) => formatTime(t, zone).slice(11, 16);
  return `${hm(start)}-${hm(start + 3600)}`;
}

/** The hourly chart in words: the totals, the busiest hour and the hours with failures. */
export function hourlySummary(h: Hourly, zone: string): string {
  const runs = h.runs.reduce((a, b) => a + b, 0);
  const failures = h.failures.reduce((a, b) => a + b, 0);
  if (!runs) return `No run in the last ${h.runs.length} hours.`;
  const busiest = h.runs.indexOf(Math.max(...h.runs));
  const failing = h.failures.map((f, i) => (f ? i : -1)).filter((i) => i >= 0);
  const label = (i: number) => hourLabel(h.from + i * 3600, zone);
  const failed = failing.length
    ? `failures in ${plural(failing.length, 'hour')}, most at ${label(h.failures.indexOf(Math.max(...h.failures)))} (${Math.max(...h.failures)})`
    : 'no failure';
  return `${plural(runs, 'run')} in the last ${h.runs.length} hours (${zone}), ${failures} failed; busiest hour ${label(busiest)} with ${h.runs[busiest]}; ${failed}.`;
}

/**
 * A job page's runs: those it holds and a newer page of them merged by result id, newest first
 * (scheduled time, then id, as cron_logs answers), at most `max`. The page loads every kept run
 * once and then only the newest, so each refresh stays one small call.
 */
export function mergeRuns(held: readonly LogResult[], fresh: readonly LogResult[], max: number): LogResult[] {
  const byId = new Map(held.map((r) => [r.id, r]));
  for (const r of fresh) byId.set(r.id, r);
  return [...byId.values()].sort((a, b) => b.time - a.time || b.id - a.id).slice(0, max);
}
