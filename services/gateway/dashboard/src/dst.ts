/**
 * Daylight-saving transitions near a run, found with Intl alone (the zone's UTC offset just before
 * and after the run): a run right after a jump forward may stand for a time that does not exist
 * that day (moved out of the gap), and a run in the hour a jump back repeats happens at one of two
 * instants with the same clock time. Pure: the unit tests run it under Node.
 */

const HOUR_MS = 3_600_000;

/** The zone's offset from UTC at an instant, in minutes (east positive). */
export function offsetMinutes(ms: number, timeZone: string): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' }).formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d\d):(\d\d)/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

/** A clock time "HH:MM" from an instant and an offset. */
const clock = (ms: number, offset: number) => {
  const minutes = (((Math.floor(ms / 60_000) + offset) % 1440) + 1440) % 1440;
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
};
const offsetText = (minutes: number) => `UTC${minutes < 0 ? '-' : '+'}${String(Math.floor(Math.abs(minutes) / 60)).padStart(2, '0')}:${String(Math.abs(minutes) % 60).padStart(2, '0')}`;

/**
 * What an owner should know about a run's clock time, or undefined when nothing is special: a run
 * at the instant the clocks jump forward (where a run set in the gap is moved to), or a run in the
 * clock hour a jump back repeats (which of the two it is).
 */
export function dstNote(ms: number, timeZone: string): string | undefined {
  let justBefore: number;
  let before: number;
  let now: number;
  let after: number;
  try {
    justBefore = offsetMinutes(ms - 60_000, timeZone);
    before = offsetMinutes(ms - HOUR_MS, timeZone);
    now = offsetMinutes(ms, timeZone);
    after = offsetMinutes(ms + HOUR_MS, timeZone);
  } catch {
    return undefined;
  }
  if (justBefore < now) {
    return `the clocks go forward at this run (${clock(ms, justBefore)} becomes ${clock(ms, now)}): times from ${clock(ms, justBefore)} to ${clock(ms - 60_000, now)} do not exist that day, and a run set in that gap happens here instead`;
  }
  if (before > now) return `${clock(ms, now)} happens twice that night (the clocks go back ${before - now} min): this run is the second one, at ${offsetText(now)}`;
  if (after < now) return `${clock(ms, now)} happens twice that night (the clocks go back ${now - after} min): this run is the first one, at ${offsetText(now)}`;
  return undefined;
}
