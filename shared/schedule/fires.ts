import { DAY, formatWall, wallFields } from './civil.ts';
import { applyInterval } from './english.ts';
import { newBudget } from './filterSearch.ts';
import { compiled, nextRunWithin, parseSchedule, type Schedule } from './schedule.ts';
import { ScheduleError } from './scheduleError.ts';

/** How far ahead a new or edited schedule must fire. */
export const FIRES_WITHIN = 366 * DAY;
/** A schedule tied to February 29 waits for the next one: at most 8 years (2096 to 2104). */
const LEAP_WITHIN = 8 * 366 * DAY + DAY;

/**
 * Refuses a recurring schedule that would never run: a crontab or a filtered interval with no
 * run within a year of `now` (an interval counts from its first candidate when that is further
 * away, as for '2 years'), unless its next run is a February 29 within the next 8 years. The
 * search has a fixed budget (filterSearch.ts), so this costs well under a millisecond for any
 * schedule; a filter that exhausts it is refused too, as too costly to plan. One-time dates,
 * timestamps and manual jobs name their own instants and are not checked. Throws ScheduleError
 * naming `filter` when the expression alone would fire, `expression` otherwise.
 */
export function checkFires(schedule: Schedule, now: number): void {
  const s = compiled(schedule);
  if (s.kind !== 'crontab' && !(s.kind === 'interval' && s.filter)) return;
  const first = s.kind === 'interval' ? applyInterval(s.interval!, now, s.zone) - now : 0;
  const horizon = Math.max(FIRES_WITHIN, first);
  const budget = newBudget();
  if (nextRunWithin(s, now, horizon, budget) !== null) return;
  if (budget.exhausted) {
    throw new ScheduleError('filter', `filter '${s.filter}' is too costly to plan: the search for its next run gave up before it found one; compare each variable with values rather than with other variables`);
  }
  const later = nextRunWithin(s, now, Math.max(LEAP_WITHIN, first), newBudget());
  if (later !== null) {
    const f = wallFields(s.zone.wallAt(later));
    if (f.month === 2 && f.day === 29) return;
  }
  const plain = s.filter ? parseSchedule({ expression: s.expression, timezone: s.timezone, jobId: s.jobId }) : null;
  const until = formatWall(s.zone.wallAt(now + horizon));
  if (plain && nextRunWithin(plain, now, horizon) !== null) {
    throw new ScheduleError('filter', `filter '${s.filter}' lets no run of '${s.expression}' through within a year (until ${until} ${s.timezone}), so the job would never run`);
  }
  throw new ScheduleError('expression', `'${s.expression}' never fires within a year (until ${until} ${s.timezone}), so the job would never run`);
}
