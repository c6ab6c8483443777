import { civilFromDays, DAY, daysFromCivil, MINUTE, wallFields, weekdayOfDays, type CivilDate } from './civil.ts';
import { CAN_FALSE, CAN_TRUE, minuteMask } from './filterAbstract.ts';
import { verdictOn } from './filterSearch.ts';
import { compiled, nextRunWithin, type CompiledSchedule, type Schedule } from './schedule.ts';

const memo = new WeakMap<CompiledSchedule, number>();
const byText = new Map<string, number>();
const scratch: CivilDate = { year: 0, month: 0, day: 0 };

/** The representative window: all of 2025 (a common year), by the job's wall clock. */
const WINDOW_START = daysFromCivil(2025, 1, 1);
const WINDOW_DAYS = 365;
/** Interval + filter: how many candidates we are willing to test for the estimate. */
const SAMPLE_CANDIDATES = 200_000;

/**
 * docs/api.md (Cron jobs): runs per day the schedule implies, rounded up, minimum 1. How it is estimated:
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
  return keptBetween(s, step, start, start + days * DAY) / days;
}

/**
 * How many points of the chain start + k * step (k >= 1) before `end` the filter keeps: found
 * kept point by kept point (the search jumps over what the filter drops), and every following point
 * in the same run of accepted wall minutes counted at once.
 */
function keptBetween(s: CompiledSchedule, step: number, start: number, end: number): number {
  const filter = s.compiledFilter!;
  let kept = 0;
  for (let t = start; ; ) {
    const c = nextRunWithin(s, t, end - t);
    if (c === null || c >= end) return kept;
    // The accepted minutes from c's on, within one offset span and before `end`.
    const stop = Math.min(end, s.zone.spanEnd(c));
    const wall = s.zone.wallAt(c);
    let windowEnd = c - (wall % MINUTE) + MINUTE;
    while (windowEnd < stop && filter.test(wallFields(s.zone.wallAt(windowEnd)))) windowEnd += MINUTE;
    const n = Math.floor((Math.min(windowEnd, stop) - 1 - c) / step) + 1;
    kept += n;
    t = c + (n - 1) * step;
  }
}

/** The values of the fields (minute aside) a filter reads, as one number. */
function keyOf(uses: ReadonlySet<string> | undefined, v: { hour: number; day: number; month: number; weekday: number }): number {
  const pick = (name: string, x: number) => (uses!.has(name) ? x : 0);
  return (((pick('month', v.month) * 32 + pick('day', v.day)) * 7 + pick('weekday', v.weekday)) * 24) + pick('hour', v.hour);
}

function cronPerDay(s: CompiledSchedule): number {
  const cron = s.cron!;
  const filter = s.compiledFilter;
  let total = 0;
  const uses = filter?.uses;
  const masks = new Map<number, [number, number]>();
  for (let d = WINDOW_START; d < WINDOW_START + WINDOW_DAYS; d++) {
    const weekday = weekdayOfDays(d);
    if (!filter) {
      total += cron.countOnDay(d);
      continue;
    }
    // Whole days (and hours) the filter keeps or drops are settled without testing each minute.
    const date = civilFromDays(d, scratch);
    const day = verdictOn(filter, cron, date, weekday);
    if (!(day & CAN_TRUE)) continue;
    if (!(day & CAN_FALSE)) {
      total += cron.countOnDay(d);
      continue;
    }
    // Otherwise the minutes an hour keeps, found once per hour, or once per distinct value of
    // the fields the filter reads (a filter on hour and minute has 24 such sets in a year).
    const vars = { minute: 0, hour: 0, day: date.day, month: date.month, weekday };
    total += cron.countOnDayByHour(d, (hour) => {
      vars.hour = hour;
      const key = keyOf(uses, vars);
      let mask = masks.get(key);
      if (!mask) masks.set(key, (mask = [...minuteMask(filter.abs, vars)] as [number, number]));
      return mask;
    });
  }
  return total / WINDOW_DAYS;
}
