import { expect } from 'chai';
import { skippedWhileDisabled } from '../../../services/planner/disabledRuns.ts';
import { ScheduleProjection } from '../../../services/planner/scheduleProjection.ts';
import { HOUR, MINUTE, SECOND, T0, jobCreated, jobDisabled } from './jobEvents.ts';

const disabled = (at: number) => ({ type: 'AccountDisabled', data: { at } });
const enabled = (at: number) => ({ type: 'AccountEnabled', data: { at } });

describe("planner: the runs a disabled account's jobs did not make", () => {
  it('enabling the account gives each scheduled job one skip record: how many occurrences, the latest one, an id every replica shares', () => {
    const p = new ScheduleProjection();
    p.apply(1, jobCreated(1, T0, { expression: '*/5 * * * *' }, 7), 1n);
    p.apply(2, jobCreated(2, T0, { expression: '*/5 * * * *' }, 7), 2n);
    p.apply(2, jobDisabled(T0 + 1), 3n);
    p.applyAccount(7, disabled(T0 + MINUTE), 4n);
    const changes = p.applyAccount(7, enabled(T0 + HOUR + 1), 5n);
    const records = changes.map((c) => (c.kind === 'replan' ? c.skipped : undefined));
    // 00:05 to 01:00: twelve occurrences; the disabled job had none to make.
    expect(records).to.deep.equal([
      { jobId: 1, runId: `1:${T0 + HOUR}:account-disabled`, occurrenceAt: T0 + HOUR, scheduledAt: T0 + HOUR, manual: false, payload: null, missed: 12, lateByMs: 0, skip: true },
      null,
    ]);
  });

  it('nothing due while disabled: no record', () => {
    const p = new ScheduleProjection();
    p.apply(1, jobCreated(1, T0, { expression: '0 0 1 1 *' }, 7), 1n);
    p.applyAccount(7, disabled(T0 + MINUTE), 2n);
    const [change] = p.applyAccount(7, enabled(T0 + HOUR), 3n);
    expect(change).to.include({ kind: 'replan', skipped: null });
  });

  it('a per-second job disabled for a day: counted past the budget by its pace, quickly', () => {
    const p = new ScheduleProjection();
    p.apply(1, jobCreated(1, T0, { expression: '* * * * * *' }, 7), 1n);
    const plan = p.get(1)!;
    const started = performance.now();
    const record = skippedWhileDisabled(plan, T0, T0 + 24 * HOUR)!;
    expect(performance.now() - started, 'ms').to.be.below(500);
    expect(record.missed).to.equal(86_400);
    expect(record.occurrenceAt).to.equal(T0 + 24 * HOUR);
    expect(skippedWhileDisabled(plan, T0, T0 + 3 * SECOND + 500)!.missed, 'exact below the budget').to.equal(3);
  });
});
