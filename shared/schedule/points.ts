import { DAY, daysFromCivil, wallFields, weekdayOfDays } from './civil.ts';
import { applyInterval } from './english.ts';
import { compiled, type CompiledSchedule, type Schedule } from './schedule.ts';

const memo = new WeakMap<CompiledSchedule, number>();
const byText = new Map<string, number>();

/** The representative window: all of 2025 (a common year), by the job's wall clock. */
const WINDOW_START = daysFromCivil(2025, 1, 1);
const WINDOW_DAYS = 365;
/** Interval + filter: how many candidates we are willing to test for the estimate. */
const SAMPLE_CANDIDATES = 200_000;

/**
 * DECISIONS 4: runs per day the schedule implies, rounded up, minimum 1. How it is estimated:
 * - crontab: runs in the 365 wall-clock days of 2025 (R draws and the filter included, DST
 *   ignored) divided by 365;
 * - interval of seconds/minutes/hours: 86400 / step; with a filter, the chain is followed for up
 *   to 7 days from Monday 2025-01-06 00:00 local (fewer for very short steps) and the kept runs
 *   are averaged per day;
 * - intervals of days, weeks or months, one-time, @timestamp and manual: 1.
 */
export function pointsPerDay(schedule: Schedule): number {
  const s = compiled(schedule);
  let points = memo.get(s);
  if (points !== undefined) return points;
  // Points depend on the schedule's text alone, except R draws (per job): thousands of jobs share a
  // few schedules, each compiled on its own, and counting a year of runs is not free.
  const key = s.cron?.isRandom ? null : `${s.expression}\u0000${s.timezone}\u0000${s.filter ?? ''}`;
  points = key === null ? undefined : byText.get(key);
  if (points === undefined) {
    points = Math.max(1, Math.ceil(estimate(s) - 1e-9));
    if (key !== null) {
      if (byText.size >= 10_000) byText.clear();
      byText.set(key, points);
    }
  }
  memo.set(s, points);
  return points;
}

function estimate(s: CompiledSchedule): number {
  if (s.kind === 'crontab') return cronPerDay(s);
  if (s.kind !== 'interval') return 1;
  const iv = s.interval!;
  if (!iv.elapsed) return 1;
  const step = (iv.hours * 3600 + iv.minutes * 60 + iv.seconds) * 1000;
  if (!s.compiledFilter) return DAY / step;
  const days = Math.max(1, Math.min(7, Math.floor((SAMPLE_CANDIDATES * step) / DAY)));
  const start = s.zone.instantOfShifted(daysFromCivil(2025, 1, 6) * DAY);
  const end = start + days * DAY;
  let kept = 0;
  for (let t = applyInterval(iv, start, s.zone); t < end; t = applyInterval(iv, t, s.zone)) {
    if (s.compiledFilter.test(wallFields(s.zone.wallAt(t)))) kept++;
  }
  return kept / days;
}

function cronPerDay(s: CompiledSchedule): number {
  const cron = s.cron!;
  const filter = s.compiledFilter;
  let total = 0;
  for (let d = WINDOW_START; d < WINDOW_START + WINDOW_DAYS; d++) {
    const weekday = weekdayOfDays(d);
    total += filter
      ? cron.countOnDay(d, (hour, minute, c) => filter.test({ minute, hour, day: c.day, month: c.month, weekday }))
      : cron.countOnDay(d);
  }
  return total / WINDOW_DAYS;
}
