import { expect } from 'chai';
import { createStaleRuns } from '../../../services/executor/staleRuns.ts';

const S = 1000;
const run = (over: Partial<Parameters<ReturnType<typeof createStaleRuns>['isStale']>[0]>) => ({ jobId: 1, plannedAt: 50 * S, planSince: 0, occurrenceAt: 60 * S, manual: false, retry: false, ...over });

describe('executor: which runs a cancel notice makes stale', () => {
  it('first attempts planned before the change, of occurrences after its boundary; nothing else', () => {
    const stale = createStaleRuns();
    stale.cancel({ jobId: 1, before: 57 * S, since: 57 * S, from: 57 * S });
    expect(stale.isStale(run({ occurrenceAt: 60 * S })), 'replaced').to.equal(true);
    expect(stale.isStale(run({ occurrenceAt: 56 * S })), 'due before the change').to.equal(false);
    expect(stale.isStale(run({ occurrenceAt: 57 * S })), 'at the boundary').to.equal(false);
    expect(stale.isStale(run({ planSince: 57 * S, plannedAt: 40 * S })), 'planned from the change').to.equal(false);
    expect(stale.isStale(run({ plannedAt: 90 * S })), 'planned late from the old version').to.equal(true);
    expect(stale.isStale(run({ manual: true })), 'a cron_run').to.equal(false);
    expect(stale.isStale(run({ jobId: 2 })), 'another job').to.equal(false);
    expect(stale.isStale(run({ retry: true, occurrenceAt: 10 * S })), 'a retry planned before').to.equal(true);
    expect(stale.isStale(run({ retry: true, plannedAt: 58 * S })), 'a retry planned after').to.equal(false);
  });

  it("takes the lower boundary of two replicas' notices for one change, and keeps earlier changes", () => {
    const stale = createStaleRuns();
    stale.cancel({ jobId: 1, before: 57 * S, since: 57 * S, from: 62 * S });
    stale.cancel({ jobId: 1, before: 58 * S, since: 57 * S, from: 57 * S });
    expect(stale.isStale(run({ occurrenceAt: 60 * S }))).to.equal(true);
    stale.cancel({ jobId: 1, before: 80 * S, since: 80 * S, from: 80 * S });
    expect(stale.isStale(run({ occurrenceAt: 60 * S })), 'still the first change').to.equal(true);
    expect(stale.isStale(run({ planSince: 57 * S, occurrenceAt: 70 * S })), 'planned between: kept').to.equal(false);
    expect(stale.isStale(run({ planSince: 57 * S, occurrenceAt: 81 * S })), 'planned between, after the second').to.equal(true);
  });
});
