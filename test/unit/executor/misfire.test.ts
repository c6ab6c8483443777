import { create } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { DueRunSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { collapsesIntoNext } from '../../../services/executor/misfire.ts';
import { createStaleRuns } from '../../../services/executor/staleRuns.ts';

const MISFIRE = 10_000;
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);

/** A run of job 7 due `lateMs` before NOW, planned from the job's state of `planSince`. */
const runOf = (lateMs: number, nextDueAt: number, extra: Partial<{ manual: boolean; attempt: number; notBefore: number; planSince: number }> = {}) =>
  create(DueRunSchema, {
    runId: `7:${NOW - lateMs}`,
    target: { jobId: 7n, accountId: 1n, url: 'http://127.0.0.1/x' },
    scheduledAt: BigInt(NOW - lateMs),
    occurrenceAt: BigInt(NOW - lateMs),
    nextDueAt: BigInt(nextDueAt),
    manual: extra.manual ?? false,
    attempt: extra.attempt ?? 0,
    notBefore: BigInt(extra.notBefore ?? 0),
    planSince: BigInt(extra.planSince ?? NOW - 3_600_000),
    plannedAt: BigInt(NOW - lateMs - 500),
  });

describe('the misfire rule at the executor: a run reached too late collapses into its next one', () => {
  const stale = createStaleRuns();

  it('collapses a first attempt later than the threshold whose next run is due', () => {
    expect(collapsesIntoNext(runOf(MISFIRE + 1, NOW - 1000), NOW, MISFIRE, stale)).to.equal(true);
    expect(collapsesIntoNext(runOf(MISFIRE + 1, NOW), NOW, MISFIRE, stale), 'the next one due this very instant').to.equal(true);
  });

  it('makes it when it is not later than the threshold', () => {
    expect(collapsesIntoNext(runOf(MISFIRE, NOW - 1000), NOW, MISFIRE, stale)).to.equal(false);
  });

  it('makes it when its next run is not due yet, or unknown (a daily job, a one-time job, the late run after downtime)', () => {
    expect(collapsesIntoNext(runOf(60_000, NOW + 1), NOW, MISFIRE, stale)).to.equal(false);
    expect(collapsesIntoNext(runOf(60_000, 0), NOW, MISFIRE, stale)).to.equal(false);
  });

  it('makes a cron_run and a retry late, never collapsed', () => {
    expect(collapsesIntoNext(runOf(60_000, NOW - 1000, { manual: true }), NOW, MISFIRE, stale)).to.equal(false);
    expect(collapsesIntoNext(runOf(60_000, NOW - 1000, { attempt: 2, notBefore: NOW - 30_000 }), NOW, MISFIRE, stale)).to.equal(false);
  });

  it('makes it when a job change made its next run stale (that one is planned again, or not at all)', () => {
    const changed = createStaleRuns();
    // The job was paused 20 s ago: occurrences after that, planned from the older state, are stale.
    changed.cancel({ jobId: 7, since: NOW - 20_000, from: NOW - 20_000, before: NOW - 20_000 });
    expect(collapsesIntoNext(runOf(25_000, NOW - 19_000), NOW, MISFIRE, changed)).to.equal(false);
    expect(collapsesIntoNext(runOf(25_000, NOW - 24_000), NOW, MISFIRE, changed), 'its next one was due before the change').to.equal(true);
  });
});
