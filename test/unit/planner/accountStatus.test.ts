import { expect } from 'chai';
import { catchUp } from '../../../services/planner/catchUp.ts';
import { ScheduleProjection } from '../../../services/planner/scheduleProjection.ts';
import { HOUR, MINUTE, T0, jobCreated, jobEdited } from './jobEvents.ts';

const disabled = (at: number) => ({ type: 'AccountDisabled', data: { at } });
const enabled = (at: number) => ({ type: 'AccountEnabled', data: { at } });

describe("planner: a disabled account's jobs", () => {
  it('are taken out of the plan while the account is disabled (cron_next: none) and come back from the enable', () => {
    const p = new ScheduleProjection();
    p.apply(1, jobCreated(1, T0, { expression: '*/5 * * * *' }, 7), 1n);
    p.apply(2, jobCreated(2, T0, { expression: '*/5 * * * *' }, 8), 2n);
    const off = p.applyAccount(7, disabled(T0 + MINUTE), 3n);
    expect(off).to.deep.equal([{ kind: 'removed', jobId: 1, at: T0 + MINUTE }]);
    expect(p.get(1)).to.equal(undefined);
    expect(p.nextRuns(7, 1, T0 + MINUTE, 2)).to.deep.equal([]);
    expect(p.nextRuns(8, 2, T0 + MINUTE, 1), 'another account goes on').to.deep.equal([T0 + 5 * MINUTE]);
    expect(() => p.nextRuns(8, 1, T0, 1), 'still not another account\'s to see').to.throw(/not found/);

    // An edit while disabled is kept; disabling twice changes nothing.
    p.apply(1, jobEdited(T0 + 2 * MINUTE, { expression: '*/10 * * * *' }), 4n);
    expect(p.applyAccount(7, disabled(T0 + 3 * MINUTE), 5n)).to.deep.equal([]);

    const on = p.applyAccount(7, enabled(T0 + HOUR + 1), 6n);
    expect(on.map((c) => c.kind)).to.deep.equal(['replan']);
    // From the next occurrence after the enable, on the edited schedule: the hour in between is not caught up.
    expect(p.nextRuns(7, 1, T0 + HOUR + 1, 2)).to.deep.equal([T0 + HOUR + 10 * MINUTE, T0 + HOUR + 20 * MINUTE]);
    expect(catchUp(p.get(1)!, null, T0 + HOUR + 2 * MINUTE, 10_000).due).to.deep.equal([]);
  });

  it('rebuilt after a restart: a job of a disabled account is parked; one of an account enabled since counts from the enable', () => {
    const p = new ScheduleProjection();
    p.applyAccount(7, disabled(T0 - HOUR), 1n);
    p.applyAccount(9, disabled(T0 - HOUR), 2n);
    p.applyAccount(9, enabled(T0 + HOUR), 3n);
    p.apply(1, jobCreated(1, T0, { expression: '*/5 * * * *' }, 7), 4n);
    p.apply(2, jobCreated(2, T0 - 2 * HOUR, { expression: '*/5 * * * *' }, 9), 5n);
    expect(p.get(1)).to.equal(undefined);
    expect(p.nextRuns(7, 1, T0, 3)).to.deep.equal([]);
    // Job 2 existed before the disable; after a restart nothing from the disabled hour is due.
    expect(catchUp(p.get(2)!, null, T0 + HOUR + 30_000, 10 * MINUTE).due).to.deep.equal([]);
    expect(p.nextRuns(9, 2, T0 + HOUR, 1)).to.deep.equal([T0 + HOUR + 5 * MINUTE]);
  });
});
