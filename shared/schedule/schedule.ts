import { DAY, HOUR, MINUTE, SECOND, wallFields } from './civil.ts';
import { nextCronRun } from './cronRuns.ts';
import { Crontab, looksLikeCrontab } from './crontab.ts';
import { checkDstPolicy, CLASSIC_DST, type DstPolicy } from './dstPolicy.ts';
import { applyInterval, parseEnglish, type Interval } from './english.ts';
import { compileFilter, type CompiledFilter } from './filter.ts';
import { newBudget, nextFilterMinute, type Budget } from './filterSearch.ts';
import { ScheduleError } from './scheduleError.ts';
import { getZone, type Zone } from './zone.ts';

export type ScheduleKind = 'crontab' | 'interval' | 'one-time' | 'timestamp' | 'manual';

/** A validated schedule. Build it with parseSchedule; the compiled state is not part of the API. */
export interface Schedule {
  readonly kind: ScheduleKind;
  readonly expression: string;
  readonly timezone: string;
  readonly filter: string | null;
  /** Seeds the R draws of a crontab and places its H. */
  readonly jobId: number;
  /** A crontab's rule for skipped and repeated local times; classic when absent. */
  readonly dst?: DstPolicy;
}

/** How far a search goes before answering "no run": 50 years plain, 10 years with a filter. */
const HORIZON = 50 * 366 * DAY;
const FILTER_HORIZON = 10 * 366 * DAY;
/** Candidates of a calendar interval (days and longer) a filter may drop in one search before we give up. */
const FILTER_BUDGET = 1_000_000;

/** The compiled form behind every Schedule that parseSchedule returns. */
export class CompiledSchedule implements Schedule {
  constructor(
    readonly kind: ScheduleKind,
    readonly expression: string,
    readonly timezone: string,
    readonly filter: string | null,
    readonly jobId: number,
    readonly zone: Zone,
    readonly compiledFilter: CompiledFilter | null,
    readonly cron: Crontab | null = null,
    readonly interval: Interval | null = null,
    /** The one run of a one-time or timestamp schedule (ms). */
    readonly at: number | null = null,
    readonly dst: DstPolicy = CLASSIC_DST,
  ) {}
}

const cronCache = new Map<string, Crontab>();

/** Shared Crontab for expressions without R or H (immutable); a private one per job otherwise. */
function crontabFor(text: string, jobId: number): Crontab {
  const cached = cronCache.get(text);
  if (cached) return cached;
  const cron = new Crontab(text, jobId);
  if (cron.perJob) return cron;
  if (cronCache.size >= 10_000) cronCache.clear();
  cronCache.set(text, cron);
  return cron;
}

/** Parses and validates; throws ScheduleError naming the field and what is wrong where. jobId seeds R draws and places H (default 0). */
export function parseSchedule(input: {
  expression: string;
  timezone: string;
  filter?: string | null;
  jobId?: number;
  dst?: { gap?: string; overlap?: string };
}): Schedule {
  const jobId = input.jobId ?? 0;
  const dst = checkDstPolicy(input.dst);
  const timezone = input.timezone;
  const zone = getZone(timezone);
  if (!zone) {
    throw new ScheduleError('timezone', `unknown time zone '${timezone}'; use an IANA name such as 'Europe/London' or 'UTC'`);
  }
  const expression = String(input.expression ?? '').trim();
  const filterText = input.filter?.trim() ? input.filter.trim() : null;
  const filter = filterText === null ? null : compileFilter(filterText);
  const make = (kind: ScheduleKind, extra: { cron?: Crontab; interval?: Interval; at?: number } = {}) => {
    // Intervals and dates have their own DST rule (docs/schedule.md): a choice there would do nothing.
    if (kind !== 'crontab' && dst.gap !== 'classic') throw new ScheduleError('dstGap', `applies to crontab expressions only; '${expression}' is not one`);
    if (kind !== 'crontab' && dst.overlap !== 'classic') throw new ScheduleError('dstOverlap', `applies to crontab expressions only; '${expression}' is not one`);
    return new CompiledSchedule(kind, expression, timezone, filterText, jobId, zone, filter, extra.cron, extra.interval, extra.at, dst);
  };

  if (expression === '') {
    throw new ScheduleError('expression', "the expression is empty; write a crontab ('*/5 * * * *'), an interval ('15 minutes'), a date or 'manual'");
  }
  if (expression.toLowerCase() === 'manual') return make('manual');
  const stamp = /^@(\d+)$/.exec(expression);
  if (stamp) {
    const at = Number(stamp[1]) * SECOND;
    if (!(at <= 8.64e15)) throw new ScheduleError('expression', `@${stamp[1]} is beyond the year 275760`);
    return make('timestamp', { at });
  }
  const tokens = expression.split(/\s+/);
  if (expression.startsWith('@') || (looksLikeCrontab(tokens) && (tokens.length >= 5 || tokens.includes('*')))) {
    return make('crontab', { cron: crontabFor(expression, jobId) });
  }
  const english = parseEnglish(expression);
  if (english.kind === 'interval') return make('interval', { interval: english.interval });
  const at = english.offset !== null ? english.wall - english.offset : zone.instantOfShifted(english.wall);
  return make('one-time', { at });
}

/** The compiled form of any Schedule (re-parsed if it was built by hand or deserialised). */
export function compiled(schedule: Schedule): CompiledSchedule {
  return schedule instanceof CompiledSchedule ? schedule : (parseSchedule(schedule) as CompiledSchedule);
}

const vars = (s: CompiledSchedule, t: number) => wallFields(s.zone.wallAt(t));

/**
 * The next run after `from` (ms since epoch): strictly after it for crontab/one-time/timestamp;
 * the expression applied to `from` (the previous run or creation time) for intervals, skipping
 * filter-dropped candidates. null when there is none (manual, past one-time, or none within the
 * horizon: 50 years, or 10 years with a filter; a filter search also stops after a fixed amount of
 * work, see filterSearch.ts).
 */
export function nextRun(schedule: Schedule, from: number): number | null {
  const s = compiled(schedule);
  if (!Number.isFinite(from)) throw new RangeError(`nextRun: 'from' must be a finite number of ms, got ${from}`);
  const filter = s.compiledFilter;
  switch (s.kind) {
    case 'manual':
      return null;
    case 'one-time':
    case 'timestamp':
      return s.at! > from && (!filter || filter.test(vars(s, s.at!))) ? s.at! : null;
    case 'crontab':
      return filter ? nextFilteredCron(s, s.cron!, filter, from, FILTER_HORIZON, newBudget()) : nextCronRun(s.cron!, s.zone, from, HORIZON, s.dst);
    case 'interval':
      return nextInterval(s, s.interval!, filter, from, FILTER_HORIZON, newBudget());
  }
}

function nextFilteredCron(s: CompiledSchedule, cron: Crontab, filter: CompiledFilter, from: number, horizon: number, budget: Budget): number | null {
  const limit = from + horizon;
  let t = from;
  for (;;) {
    const run = nextCronRun(cron, s.zone, t, limit - t, s.dst);
    if (run === null) return null;
    const wall = s.zone.wallAt(run);
    if (filter.test(wallFields(wall))) return run;
    // No run passes before the next minute that both the filter and the crontab's fields allow,
    // up to the next offset change: there the wall clock may step back to a minute the filter
    // accepts, or a run in a DST gap happens at a wall time outside the crontab's fields.
    const stop = Math.min(limit, s.zone.spanEnd(run));
    const next = nextFilterMinute(filter, wall + 1, wall + (stop - run), cron, budget);
    if (next === next) t = run + (next - wall) - 1;
    else if (budget.exhausted || stop >= limit) return null;
    else t = stop - 1;
  }
}

function nextInterval(s: CompiledSchedule, iv: Interval, filter: CompiledFilter | null, from: number, horizon: number, budget: Budget): number | null {
  // Seconds, minutes and hours only: the chain is from + k * step, so it can be jumped along.
  const step = iv.elapsed ? iv.hours * HOUR + iv.minutes * MINUTE + iv.seconds * SECOND : 0;
  let t = from;
  for (let candidates = FILTER_BUDGET; candidates > 0; candidates--) {
    const run = applyInterval(iv, t, s.zone);
    // Validation guarantees progress; this guards against a future rule that breaks it.
    if (!(run > t)) return null;
    const wall = s.zone.wallAt(run);
    if (!filter || filter.test(wallFields(wall))) return run;
    if (run - from > horizon) return null;
    t = run;
    if (step > 0) {
      // Every candidate before the next minute the filter accepts is dropped: jump to the last
      // chain point before it (not past an offset change, where the wall clock may step back).
      const spanEnd = s.zone.spanEnd(run);
      const stop = Math.min(from + horizon + step, spanEnd);
      // Within the span the offset is constant: a chain point falls in a wall minute when the
      // first point at or after the minute's start comes before its end.
      const offset = wall - run;
      const hit = (minute: number) => run + Math.ceil((minute - offset - run) / step) * step < minute - offset + MINUTE;
      const next = nextFilterMinute(filter, wall + 1, wall + (stop - run), null, budget, step > MINUTE ? hit : undefined);
      if (next !== next && (budget.exhausted || spanEnd >= from + horizon + step)) return null;
      const target = next === next ? run + (next - wall) : stop;
      t = run + Math.floor((target - run - 1) / step) * step;
    }
  }
  return null;
}

/**
 * nextRun within `horizon` ms of `from` (filtered crontabs and intervals; the rest ignore it),
 * spending at most `budget` on filter searches. For checks that must stay cheap.
 */
export function nextRunWithin(schedule: Schedule, from: number, horizon: number, budget: Budget = newBudget()): number | null {
  const s = compiled(schedule);
  const filter = s.compiledFilter;
  if (s.kind === 'crontab') return filter ? nextFilteredCron(s, s.cron!, filter, from, horizon, budget) : nextCronRun(s.cron!, s.zone, from, horizon, s.dst);
  if (s.kind === 'interval') return nextInterval(s, s.interval!, filter, from, horizon, budget);
  return nextRun(s, from);
}

/** Up to `count` successive runs, chaining nextRun. */
export function nextRuns(schedule: Schedule, from: number, count: number): number[] {
  const s = compiled(schedule);
  const out: number[] = [];
  let t = from;
  while (out.length < count) {
    const run = nextRun(s, t);
    if (run === null) break;
    out.push(run);
    t = run;
  }
  return out;
}

/**
 * An English duration for cron_pause `for` ("15 minutes", "1 hour", "2 days", "1 week"): the
 * instant (ms) it ends when applied to `from` in `timezone`. Hours and smaller are elapsed time;
 * days and longer keep the wall time. Throws ScheduleError('expression', ...) when not a duration.
 */
export function addDuration(duration: string, from: number, timezone: string): number {
  const zone = getZone(timezone);
  if (!zone) throw new ScheduleError('timezone', `unknown time zone '${timezone}'; use an IANA name such as 'Europe/London'`);
  const text = String(duration ?? '').trim();
  let english;
  try {
    english = parseEnglish(text);
  } catch (e) {
    if (e instanceof ScheduleError) throw new ScheduleError('expression', `'${text}' is not a duration: ${e.message}`);
    throw e;
  }
  const iv = english.kind === 'interval' ? english.interval : null;
  if (!iv || iv.time || iv.weekday !== null || iv.dayOf || iv.midnight) {
    throw new ScheduleError('expression', `'${text}' is not a duration; write an amount and unit such as '15 minutes', '1 hour' or '2 days'`);
  }
  return applyInterval(iv, from, zone);
}
