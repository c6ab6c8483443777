import { expect } from 'chai';
import type { JobEvent } from '../../../shared/job/index.ts';
import { catchUp, type Watermark } from '../../../services/planner/catchUp.ts';
import { jitterMs } from '../../../services/planner/occurrences.ts';
import { ScheduleProjection } from '../../../services/planner/scheduleProjection.ts';
import { HOUR, MINUTE, SECOND, T0, jobCreated, jobDisabled, jobPaused, runRequested } from './jobEvents.ts';

const MISFIRE = 10 * SECOND;

/** One job's plan after `events`, as the projection at start builds it. */
function planOf(events: JobEvent[], watermark: Watermark | null, id = 1) {
  const projection = new ScheduleProjection(watermark);
  events.forEach((e, i) => projection.apply(id, e, BigInt(i + 1)));
  return projection.get(id)!;
}

/** A watermark that covers every event above (positions 1..). */
const wm = (at: number): Watermark => ({ at, position: 1000n });

describe('planner: catch-up after downtime', () => {
  it('first start ever (no watermark): starts from now, nothing is caught up', () => {
    const plan = planOf([jobCreated(1, T0, { expression: '* * * * *' })], null);
    const c = catchUp(plan, null, T0 + HOUR + 30 * SECOND, MISFIRE);
    expect(c.due).to.deep.equal([]);
    expect(c.next).to.equal(T0 + HOUR + MINUTE);
  });

  it('a quick restart: every occurrence within the misfire threshold is published on its own', () => {
    const plan = planOf([jobCreated(1, T0, { expression: '*/2 * * * * *' })], wm(T0 + HOUR));
    const now = T0 + HOUR + 9 * SECOND;
    const c = catchUp(plan, wm(T0 + HOUR), now, MISFIRE);
    expect(c.due.map((r) => r.runId)).to.deep.equal([2, 4, 6, 8].map((s) => `1:${T0 + HOUR + s * SECOND}`));
    expect(c.due.every((r) => r.missed === 0 && !r.manual)).to.equal(true);
    expect(c.due.map((r) => r.lateByMs)).to.deep.equal([7, 5, 3, 1].map((s) => s * SECOND));
    expect(c.next).to.equal(T0 + HOUR + 10 * SECOND);
  });

  it('a long outage: older occurrences collapse into ONE late run (latest run id, how many, how late), then on schedule', () => {
    const plan = planOf([jobCreated(1, T0, { expression: '*/5 * * * *' })], wm(T0 + HOUR));
    const now = T0 + 3 * HOUR + 2 * MINUTE;
    const c = catchUp(plan, wm(T0 + HOUR), now, MISFIRE);
    expect(c.due).to.have.length(1);
    const late = c.due[0]!;
    expect(late.runId).to.equal(`1:${T0 + 3 * HOUR}`);
    expect(late.missed).to.equal(24); // 01:05 .. 03:00
    expect(late.lateByMs).to.equal(2 * MINUTE);
    expect(late.scheduledAt).to.equal(T0 + 3 * HOUR);
    expect(c.next).to.equal(T0 + 3 * HOUR + 5 * MINUTE);
  });

  it('both at once: the collapsed late run first, then the recent ones one by one', () => {
    const plan = planOf([jobCreated(1, T0, { expression: '*/3 * * * * *' })], wm(T0));
    const now = T0 + MINUTE + 7 * SECOND;
    const c = catchUp(plan, wm(T0), now, MISFIRE);
    const [late, ...recent] = c.due;
    expect(late!.missed).to.equal(18); // 00:03 .. 00:54 are more than 10 s old
    expect(late!.runId).to.equal(`1:${T0 + 54 * SECOND}`);
    expect(recent.map((r) => (r.occurrenceAt - T0) / SECOND)).to.deep.equal([57, 60, 63, 66]);
  });

  it('an interval: one late run, then the chain goes on from its own points', () => {
    const created = T0 + 11 * SECOND;
    const plan = planOf([jobCreated(1, created, { expression: '20 minutes' })], wm(T0 + HOUR));
    const now = T0 + 5 * HOUR;
    const c = catchUp(plan, wm(T0 + HOUR), now, MISFIRE);
    expect(c.due).to.have.length(1);
    expect(c.due[0]!.missed).to.equal(12);
    expect(c.due[0]!.occurrenceAt).to.equal(created + 4 * HOUR + 40 * MINUTE);
    expect(c.next).to.equal(created + 5 * HOUR);
  });

  it('a pause with an end that covered the outage: the paused occurrences are skipped, not caught up', () => {
    const plan = planOf([jobCreated(1, T0, { expression: '*/10 * * * *' }), jobPaused(T0 + 30 * MINUTE, T0 + 2 * HOUR)], wm(T0 + HOUR));
    const c = catchUp(plan, wm(T0 + HOUR), T0 + 2 * HOUR + 5 * SECOND, MISFIRE);
    expect(c.due.map((r) => r.occurrenceAt)).to.deep.equal([T0 + 2 * HOUR]);
    expect(c.due[0]!.missed).to.equal(0);
  });

  it('a disabled job owes nothing', () => {
    const plan = planOf([jobCreated(1, T0, { expression: '* * * * *' }), jobDisabled(T0 + MINUTE)], wm(T0 + HOUR));
    const c = catchUp(plan, wm(T0 + HOUR), T0 + 5 * HOUR, MISFIRE);
    expect(c).to.deep.equal({ due: [], delayed: [], next: null });
  });

  it('one-time: its single run is owed once if it fell in the outage, and nothing if the watermark passed it', () => {
    const at = T0 + 2 * HOUR;
    const missed = planOf([jobCreated(1, T0, { expression: `@${at / 1000}` })], wm(T0 + HOUR));
    const c = catchUp(missed, wm(T0 + HOUR), T0 + 3 * HOUR, MISFIRE);
    expect(c.due.map((r) => [r.runId, r.missed])).to.deep.equal([[`1:${at}`, 1]]);
    expect(c.next).to.equal(null);
    const done = planOf([jobCreated(1, T0, { expression: `@${at / 1000}` })], wm(at));
    expect(catchUp(done, wm(at), T0 + 3 * HOUR, MISFIRE).due).to.deep.equal([]);
  });

  it('queued cron_runs whose time passed while down are due at once; later ones stay queued', () => {
    const plan = planOf(
      [jobCreated(1, T0, { expression: 'manual' }), runRequested(T0, '1:a', T0 + 2 * HOUR, 'x=1'), runRequested(T0, '1:b', T0 + 9 * HOUR)],
      wm(T0 + HOUR),
    );
    const c = catchUp(plan, wm(T0 + HOUR), T0 + 3 * HOUR, MISFIRE);
    expect(c.due.map((r) => [r.runId, r.manual, r.payload, r.lateByMs])).to.deep.equal([['1:a', true, 'x=1', HOUR]]);
    expect(plan.queued!.map((q) => q.runId)).to.deep.equal(['1:b']);
  });

  it('with a delay: a run whose occurrence came before the watermark but whose delayed time did not is still owed', () => {
    const plan = planOf([jobCreated(1, T0, { expression: '* * * * *', delay: 30 })], wm(T0 + HOUR));
    const now = T0 + HOUR + 5 * SECOND;
    const c = catchUp(plan, wm(T0 + HOUR), now, MISFIRE);
    const expected: number[] = [];
    for (let o = T0 + 30 * MINUTE; o <= now; o += MINUTE) {
      const p = o + jitterMs(1, o, 30);
      if (p > T0 + HOUR) expected.push(o);
    }
    const owed = [...c.due, ...c.delayed].map((r) => r.occurrenceAt).sort((a, b) => a - b);
    expect(owed).to.deep.equal(expected);
    for (const r of c.delayed) expect(r.scheduledAt).to.equal(r.occurrenceAt + jitterMs(1, r.occurrenceAt, 30)).and.be.greaterThan(now);
  });

  it('an event the watermark did not cover is caught up from its own time (the bus drops what was already out)', () => {
    const events = [jobCreated(1, T0 + HOUR - 30 * SECOND, { expression: '*/10 * * * * *' })];
    const plan = planOf(events, { at: T0 + HOUR, position: 0n });
    const c = catchUp(plan, { at: T0 + HOUR, position: 0n }, T0 + HOUR + 5 * SECOND, MISFIRE);
    // -20 s and -10 s are older than the threshold (one late run), 0 s is recent (on its own).
    expect(c.due.map((r) => [(r.occurrenceAt - T0 - HOUR) / SECOND, r.missed])).to.deep.equal([[-10, 2], [0, 0]]);
  });
});
