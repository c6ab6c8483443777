import { expect } from 'chai';
import fc from 'fast-check';
import { accountCalendar } from '../../../services/planner/calendar.ts';
import { upcomingRuns } from '../../../services/planner/occurrences.ts';
import { ScheduleProjection } from '../../../services/planner/scheduleProjection.ts';
import type { JobEvent } from '../../../shared/job/index.ts';
import { HOUR, MINUTE, T0, jobCreated, jobDeleted, runRequested } from './jobEvents.ts';

/** A projection fed `events` (stream id, event) at positions 1, 2, 3... */
function project(events: [number, JobEvent][]) {
  const projection = new ScheduleProjection();
  events.forEach(([id, e], i) => projection.apply(id, e, BigInt(i + 1)));
  return projection;
}

const EXPRESSIONS = ['* * * * *', '*/7 * * * *', '0 * * * *', '30 9 * * *', '*/20 * * * * *', '5 minutes', '1 hour 30 minutes', '0 0 1 1 *', 'manual', '15 */2 * * *'];

/**
 * The calendar's merge (services/planner/calendar.ts) against the plainest reference: every job's
 * runs from cron_next's own rules, all of them, sorted by (time, job id), then cut by the caps.
 */
describe('planner: account_calendar, the merge of the jobs\' runs', () => {
  it('equals every run of cron_next sorted and cut, for any mix of schedules, delays, caps and horizons', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ expression: fc.constantFrom(...EXPRESSIONS), delay: fc.constantFrom(0, 0, 2), timezone: fc.constantFrom('UTC', 'Asia/Kolkata', 'Europe/London') }), { minLength: 0, maxLength: 8 }),
        fc.integer({ min: 1, max: 24 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 200 }),
        async (jobs, hours, perJob, limit) => {
          const events: [number, JobEvent][] = jobs.map((j, i) => [i + 1, jobCreated(i + 1, T0, j)]);
          // Another account's job never shows.
          events.push([99, jobCreated(99, T0, { expression: '* * * * *' }, 2)]);
          const p = project(events);
          const now = T0 + 17 * MINUTE;
          const until = now + hours * HOUR;
          const all = jobs.flatMap((_, i) => upcomingRuns(p.get(i + 1)!, now, perJob + 1).filter((t) => t <= until).map((at) => ({ id: i + 1, at })));
          all.sort((a, b) => a.at - b.at || a.id - b.id);
          const taken = new Map<number, number>();
          const expected: { id: number; at: number }[] = [];
          let truncated = false;
          for (const r of all) {
            const n = taken.get(r.id) ?? 0;
            if (n === perJob || expected.length === limit) {
              truncated = true;
              continue;
            }
            taken.set(r.id, n + 1);
            expected.push(r);
          }
          const got = await accountCalendar(p, 1, now, until, perJob, limit);
          expect(got.runs.map((r) => ({ id: r.job.id, at: r.at }))).to.deep.equal(expected);
          expect(got.truncated).to.equal(truncated);
          expect(got.from).to.equal(now);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('shows queued cron_run runs, forgets deleted jobs, and answers nothing for an account without jobs', async () => {
    const p = project([
      [1, jobCreated(1, T0, { expression: 'manual' })],
      [1, runRequested(T0, 'r1', T0 + 5 * MINUTE)],
      [2, jobCreated(2, T0, { expression: '* * * * *' })],
      [2, jobDeleted(T0)],
    ]);
    const got = await accountCalendar(p, 1, T0, T0 + HOUR, 100, 1000);
    expect(got.runs.map((r) => [r.job.id, r.at])).to.deep.equal([[1, T0 + 5 * MINUTE]]);
    expect(got.truncated).to.equal(false);
    expect((await accountCalendar(p, 3, T0, T0 + HOUR, 100, 1000)).runs).to.deep.equal([]);
  });
});
