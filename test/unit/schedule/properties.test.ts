import { expect } from 'chai';
import { CronExpressionParser } from 'cron-parser';
import fc from 'fast-check';
import { DAY, HOUR, MINUTE } from '../../../shared/schedule/civil.ts';
import type { Crontab } from '../../../shared/schedule/crontab.ts';
import { nextRun, nextRuns, parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';
import { compiled, type Schedule } from '../../../shared/schedule/schedule.ts';
import type { Zone } from '../../../shared/schedule/zone.ts';

const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'America/Santiago',
  'Australia/Sydney',
  'Asia/Tokyo',
];

/** Known DST changes (UTC instants) to aim the DST properties at. */
const TRANSITIONS: [string, string][] = [
  ['America/New_York', '2024-03-10T07:00:00Z'],
  ['America/New_York', '2024-11-03T06:00:00Z'],
  ['Europe/London', '2024-03-31T01:00:00Z'],
  ['Europe/London', '2024-10-27T01:00:00Z'],
  ['Australia/Lord_Howe', '2024-10-05T15:30:00Z'],
  ['Australia/Lord_Howe', '2025-04-05T15:00:00Z'],
  ['America/Santiago', '2024-04-07T03:00:00Z'],
  ['America/Santiago', '2024-09-08T04:00:00Z'],
  ['Pacific/Chatham', '2024-04-06T14:00:00Z'],
  ['Pacific/Chatham', '2024-09-28T14:00:00Z'],
  ['Australia/Sydney', '2024-10-05T16:00:00Z'],
];

const between = (min: number, max: number) => fc.integer({ min, max });

/** One crontab field: *, a value, a list, a range, a step. */
const field = (min: number, max: number) =>
  fc.oneof(
    fc.constant('*'),
    between(1, Math.max(1, Math.floor(max / 2))).map((n) => `*/${n}`),
    between(min, max).map(String),
    fc.uniqueArray(between(min, max), { minLength: 2, maxLength: 4 }).map((a) => a.sort((x, y) => x - y).join(',')),
    fc.tuple(between(min, max), between(min, max)).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.tuple(between(min, max), between(min, max), between(1, 5)).map(([a, b, s]) => `${Math.min(a, b)}-${Math.max(a, b)}/${s}`),
  );

/** Hours biased to the small hours, where DST changes happen. */
const hourField = fc.oneof(field(0, 23), field(0, 4), fc.constant('*'));

const crontab = fc
  .tuple(field(0, 59), hourField, fc.oneof(fc.constant('*'), field(1, 31), fc.constant('L')), fc.oneof(fc.constant('*'), field(1, 12)), fc.oneof(fc.constant('*'), field(0, 7)))
  .map((f) => f.join(' '));

/** Instants between 2020 and 2032, at any second. */
const instant = between(Date.UTC(2020, 0, 1) / 1000, Date.UTC(2032, 0, 1) / 1000).map((s) => s * 1000);

/** parseSchedule, or null when the random crontab can never run (e.g. day 31 in February). */
function tryParse(expression: string, timezone: string, filter: string | null = null): Schedule | null {
  try {
    return parseSchedule({ expression, timezone, filter, jobId: 42 });
  } catch (e) {
    if (e instanceof ScheduleError) return null;
    throw e;
  }
}

/**
 * The DST rule of docs/schedule.md by brute force, minute by minute in real time: with `*` hours every
 * instant whose wall time matches; with fixed hours a matching wall time on its first pass only,
 * and one run at the jump instant when the gap hid a match.
 */
function oracle(cron: Crontab, zone: Zone, from: number, to: number): number[] {
  const runs: number[] = [];
  let maxWall = -Infinity;
  for (let t = Math.floor(from / MINUTE) * MINUTE - DAY; t <= to; t += MINUTE) {
    const before = zone.offsetAt(t - MINUTE);
    const offset = zone.offsetAt(t);
    const wall = t + offset;
    let run = false;
    if (cron.followsRealTime) run = cron.matchesWall(wall);
    else {
      for (let g = t + before; offset > before && g < wall; g += MINUTE) run ||= cron.matchesWall(g);
      run ||= wall > maxWall && cron.matchesWall(wall);
    }
    maxWall = Math.max(maxWall, wall);
    if (run && t > from) runs.push(t);
  }
  return runs;
}

function runsUntil(s: Schedule, from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = nextRun(s, from); t !== null && t <= to; t = nextRun(s, t)) out.push(t);
  return out;
}

describe('schedule properties (fast-check)', () => {
  it('crontab runs are strictly increasing and after `from`', () => {
    fc.assert(
      fc.property(crontab, fc.constantFrom(...ZONES), instant, (expr, zone, from) => {
        const s = tryParse(expr, zone);
        fc.pre(s !== null);
        const runs = nextRuns(s, from, 6);
        expect(runs.length).to.equal(6);
        let prev = from;
        for (const r of runs) {
          expect(r).to.be.greaterThan(prev);
          prev = r;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every crontab run matches the fields in the job zone, except a run at the jump of a DST gap', () => {
    fc.assert(
      fc.property(crontab, fc.constantFrom(...ZONES), instant, (expr, zone, from) => {
        const s = tryParse(expr, zone);
        fc.pre(s !== null);
        const c = compiled(s);
        for (const r of nextRuns(c, from, 6)) {
          const jump = c.zone.offsetAt(r - 1) < c.zone.offsetAt(r);
          const ok = c.cron!.matchesWall(c.zone.wallAt(r)) || (jump && !c.cron!.followsRealTime);
          expect(ok, `${expr} in ${zone}: ${new Date(r).toISOString()}`).to.equal(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('next(next(t)) equals the second of two runs, and any start before a run finds that run', () => {
    fc.assert(
      fc.property(crontab, fc.constantFrom(...ZONES), instant, fc.double({ min: 0, max: 1, noNaN: true }), (expr, zone, from, frac) => {
        const s = tryParse(expr, zone);
        fc.pre(s !== null);
        const [a, b] = nextRuns(s, from, 2);
        expect(nextRun(s, nextRun(s, from)!)).to.equal(b);
        const mid = from + Math.floor((a! - from) * frac);
        expect(nextRun(s, Math.min(mid, a! - 1))).to.equal(a);
      }),
      { numRuns: 300 },
    );
  });

  it('around DST changes, crontab runs equal a minute-by-minute brute force of the DST rule', () => {
    fc.assert(
      fc.property(crontab, fc.constantFrom(...TRANSITIONS), between(0, 30 * 60), (expr, [zone, at], minutesBefore) => {
        const s = tryParse(expr, zone);
        fc.pre(s !== null);
        const c = compiled(s);
        const from = Date.parse(at) - minutesBefore * MINUTE;
        const to = from + 2 * DAY;
        expect(runsUntil(c, from, to).map((t) => new Date(t).toISOString())).to.deep.equal(
          oracle(c.cron!, c.zone, from, to).map((t) => new Date(t).toISOString()),
        );
      }),
      { numRuns: 250 },
    );
  });

  it('in UTC without the day/weekday OR, runs equal cron-parser 5 (the library we diverge from elsewhere)', () => {
    const utcCrontab = fc
      .tuple(field(0, 59), field(0, 23), fc.oneof(field(1, 28), fc.constant('*')), fc.oneof(fc.constant('*'), field(1, 12)), field(0, 6), fc.boolean())
      .map(([mi, h, d, mo, wd, useDay]) => [mi, h, useDay ? d : '*', mo, useDay ? '*' : wd].join(' '));
    fc.assert(
      fc.property(utcCrontab, instant, (expr, from) => {
        const s = parseSchedule({ expression: expr, timezone: 'UTC' });
        const theirs = CronExpressionParser.parse(expr, { currentDate: new Date(from), tz: 'UTC' })
          .take(5)
          .map((d) => d.getTime());
        expect(nextRuns(s, from, 5), expr).to.deep.equal(theirs);
      }),
      { numRuns: 300 },
    );
  });

  it('R draws are stable for a job and a day, distinct, and from the pool', () => {
    const expr = fc.constantFrom('R * * * *', 'R3 R * * *', 'R2,0-29 R,8-17 * * *', 'R5,*/5 3 * * *', 'R R2 * * 1-5');
    fc.assert(
      fc.property(expr, fc.nat(), fc.constantFrom(...ZONES), instant, (e, jobId, zone, from) => {
        const a = parseSchedule({ expression: e, timezone: zone, jobId });
        const b = parseSchedule({ expression: e, timezone: zone, jobId });
        expect(nextRuns(a, from, 8)).to.deep.equal(nextRuns(b, from, 8));
        const day = new Date(from);
        const [y, m, d] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
        const ca = compiled(a).cron!;
        const drawn = ca.drawnValues(y, m, d);
        expect(compiled(b).cron!.drawnValues(y, m, d)).to.deep.equal(drawn);
        const { minute, hour } = ca.fields;
        expect(drawn.minutes).to.have.length(minute.randomCount || minute.values.length);
        expect(drawn.hours).to.have.length(hour.randomCount || hour.values.length);
        expect(drawn.minutes.every((v) => minute.values.includes(v))).to.equal(true);
        expect(drawn.hours.every((v) => hour.values.includes(v))).to.equal(true);
      }),
      { numRuns: 200 },
    );
  });

  it('elapsed intervals step exactly; day intervals keep the wall time outside DST gaps', () => {
    fc.assert(
      fc.property(between(1, 500), fc.constantFrom('seconds', 'minutes', 'hours'), fc.constantFrom(...ZONES), instant, (n, unit, zone, from) => {
        const ms = n * (unit === 'seconds' ? 1000 : unit === 'minutes' ? MINUTE : HOUR);
        const runs = nextRuns(parseSchedule({ expression: `${n} ${unit}`, timezone: zone }), from, 4);
        expect(runs).to.deep.equal([1, 2, 3, 4].map((i) => from + i * ms));
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(between(1, 40), fc.constantFrom(...ZONES), instant, (n, zone, from) => {
        const s = compiled(parseSchedule({ expression: `every ${n} days`, timezone: zone }));
        const run = nextRun(s, from)!;
        const wallStep = s.zone.wallAt(run) - s.zone.wallAt(from);
        // Exactly n days of wall clock, unless the result fell in a gap and moved forward by it.
        const gapShift = wallStep - n * DAY;
        expect(gapShift === 0 || (gapShift > 0 && gapShift <= HOUR)).to.equal(true);
      }),
      { numRuns: 200 },
    );
  });
});
