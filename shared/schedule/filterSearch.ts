import { civilFromDays, DAY, daysFromCivil, daysInMonth, HOUR, MINUTE, weekdayOfDays, type CivilDate } from './civil.ts';
import type { Crontab } from './crontab.ts';
import type { CompiledFilter, FilterVars } from './filter.ts';
import { CAN_TRUE, evalAbs, minuteMask, type Domains } from './filterAbstract.ts';

/**
 * Work allowed for one search (nextRun, or the check of a new schedule), in filter evaluations:
 * one per month, day or hour looked at. A year of the sparsest filter takes a few hundred; ten
 * years of a filter whose days all may pass but whose minutes never do, under 100,000.
 */
export const SEARCH_BUDGET = 200_000;

/** What a search may spend; `exhausted` tells "gave up" from "none". */
export interface Budget {
  left: number;
  exhausted: boolean;
}

export const newBudget = (): Budget => ({ left: SEARCH_BUDGET, exhausted: false });

const ALL = -1;
const bit = (x: number) => (x < 32 ? 1 << x : 0);
const bitHi = (x: number) => (x >= 32 ? 1 << (x - 32) : 0);
const has = (lo: number, hi: number, x: number) => ((x < 32 ? lo >>> x : hi >>> (x - 32)) & 1) === 1;
/** Values >= x. */
const fromLo = (x: number) => (x >= 32 ? 0 : ALL << x);
const fromHi = (x: number) => (x <= 32 ? ALL : ALL << (x - 32));

function maskOf(values: readonly number[]): [number, number] {
  let lo = 0;
  let hi = 0;
  for (const v of values) {
    lo |= bit(v);
    hi |= bitHi(v);
  }
  return [lo, hi];
}
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const MINUTES = maskOf(range(0, 59));
const HOURS = maskOf(range(0, 23));

/** Which (hour, minute) values a search considers: every one, or a crontab's (its R pool for R fields). */
interface Times {
  minute: [number, number];
  hour: [number, number];
  cron: Crontab | null;
}
const cache = new WeakMap<Crontab, Times>();
const ANY: Times = { minute: MINUTES, hour: HOURS, cron: null };

function timesOf(cron: Crontab | null): Times {
  if (!cron) return ANY;
  let t = cache.get(cron);
  if (!t) cache.set(cron, (t = { minute: maskOf(cron.fields.minute.values), hour: maskOf(cron.fields.hour.values), cron }));
  return t;
}

/**
 * The first wall minute (wall ms, a whole minute) at or after `from` and before `limit` where the
 * filter may pass, and, with `cron`, where the crontab's month, date, hour and minute fields
 * allow a run; NaN when there is none (or the budget ran out: see `budget.exhausted`). Looks at
 * each month once, each day of a month that may pass, and the exact set of passing minutes of
 * each hour of a day that may pass (one set per day when the filter does not read the hour), so
 * a year costs hundreds of evaluations, not half a million.
 * The minute found passes the filter for certain; the crontab is only narrowed to its fields (R
 * draws and seconds are the caller's). `accept`, when given, must also hold for the minute (an
 * interval: a point of its chain falls in it).
 */
export function nextFilterMinute(
  filter: CompiledFilter,
  from: number,
  limit: number,
  cron: Crontab | null,
  budget: Budget,
  accept?: (wallMinute: number) => boolean,
): number {
  const times = timesOf(cron);
  const [minLo, minHi] = times.minute;
  const [hourLo, hourHi] = times.hour;
  const d: Domains = { lo: [minLo, hourLo, 0, 0, 0], hi: [minHi, hourHi, 0, 0, 0] };
  const vars: FilterVars = { minute: 0, hour: 0, day: 0, month: 0, weekday: 0 };
  const start = Math.ceil(from / MINUTE) * MINUTE;
  let days = Math.floor(start / DAY);
  let startHour = Math.floor((start - days * DAY) / HOUR);
  let startMinute = Math.floor((start - days * DAY - startHour * HOUR) / MINUTE);
  const c: CivilDate = civilFromDays(days, { year: 0, month: 0, day: 0 });
  const spend = () => {
    if (--budget.left >= 0) return true;
    budget.exhausted = true;
    return false;
  };
  const nextMonth = () => {
    if (++c.month > 12) {
      c.month = 1;
      c.year++;
    }
    c.day = 1;
    days = daysFromCivil(c.year, c.month, 1);
    startHour = startMinute = 0;
  };

  while (days * DAY < limit) {
    if (!spend()) return NaN;
    const dim = daysInMonth(c.year, c.month);
    if (cron && !cron.fields.month.values.includes(c.month)) {
      nextMonth();
      continue;
    }
    // The rest of this month at once: its month, the days left, their weekdays.
    d.lo[3] = bit(c.month);
    d.lo[2] = fromLo(c.day) & (dim === 31 ? ALL >>> 0 : (1 << (dim + 1)) - 1);
    let weekdays = 0;
    for (let i = 0; i < 7 && c.day + i <= dim; i++) weekdays |= 1 << weekdayOfDays(days + i);
    d.lo[4] = weekdays;
    d.lo[1] = hourLo;
    d.lo[0] = minLo;
    d.hi[0] = minHi;
    if (!(evalAbs(filter.abs, d) & CAN_TRUE)) {
      nextMonth();
      continue;
    }
    for (; c.day <= dim; c.day++, days++, startHour = startMinute = 0) {
      if (days * DAY >= limit) return NaN;
      if (cron && !cron.matchesDate(days, c)) continue;
      if (!spend()) return NaN;
      const weekday = weekdayOfDays(days);
      d.lo[2] = bit(c.day);
      d.lo[4] = 1 << weekday;
      d.lo[1] = hourLo & fromLo(startHour);
      d.lo[0] = minLo;
      d.hi[0] = minHi;
      const r = evalAbs(filter.abs, d);
      if (!(r & CAN_TRUE)) continue;
      // Exact from here on: the minutes each hour keeps, one mask for the whole day when the
      // filter does not read the hour (all of them when the day passes whatever the time).
      vars.month = c.month;
      vars.day = c.day;
      vars.weekday = weekday;
      const byHour = filter.uses.has('hour');
      let lo = ALL;
      let hi = ALL;
      let known = r === CAN_TRUE;
      for (let h = startHour; h < 24; h++, startMinute = 0) {
        if (!has(hourLo, 0, h)) continue;
        if (!known || byHour) {
          if (!spend()) return NaN;
          vars.hour = h;
          [lo, hi] = minuteMask(filter.abs, vars);
          known = r !== CAN_TRUE;
        }
        const mLo = lo & minLo & fromLo(startMinute);
        const mHi = hi & minHi & fromHi(startMinute);
        if (!(mLo | mHi)) continue;
        if (accept && !spend()) return NaN;
        for (let m = startMinute; m < 60; m++) {
          if (!has(mLo, mHi, m)) continue;
          const at = days * DAY + h * HOUR + m * MINUTE;
          if (at >= limit) return NaN;
          if (!accept || accept(at)) return at;
        }
      }
    }
    // The month is done: c.day is past its end.
    c.day = dim;
    nextMonth();
  }
  return NaN;
}

/**
 * What the filter can be over one local date (month, day, weekday fixed) and, when `hour` is
 * given, one hour of it; the other fields range over the crontab's values (every value without
 * one). CAN_TRUE alone: every minute passes; CAN_FALSE alone: none does.
 */
export function verdictOn(filter: CompiledFilter, cron: Crontab | null, c: CivilDate, weekday: number, hour = -1): number {
  const times = timesOf(cron);
  const d: Domains = {
    lo: [times.minute[0], hour < 0 ? times.hour[0] : 1 << hour, bit(c.day), bit(c.month), 1 << weekday],
    hi: [times.minute[1], 0, 0, 0, 0],
  };
  return evalAbs(filter.abs, d);
}
