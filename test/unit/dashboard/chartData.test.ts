import { expect } from 'chai';
import { accountHourly, durationSummary, hourLabel, hourlySummary, latenessSummary, mergeRuns, runSeries } from '../../../services/gateway/dashboard/src/chartData.ts';
import type { LogResult } from '../../../services/gateway/dashboard/src/format.ts';
import type { JobWithHealth } from '../../../services/gateway/dashboard/src/health.ts';

/** 2024-10-16 08:30:00 UTC. */
const T = 1_729_067_400;
const run = (id: number, over: Partial<LogResult> = {}): LogResult => ({
  id,
  time: T + id * 60,
  startTime: T + id * 60,
  status: 0,
  httpStatus: 200,
  error: '',
  output: '',
  executionTime: 0.2,
  attempt: 1,
  willRetry: false,
  lateness: 0.1,
  ...over,
});
const job = (hourly: JobWithHealth['hourly24h'], id = 1) => ({ id, name: '', url: '', expression: '', timezone: 'UTC', group: null, status: 0, fail: 0, nextRun: null, hourly24h: hourly }) as JobWithHealth;

describe('dashboard charts: data and words', () => {
  it("puts a job's runs in time order, one column of durations per outcome", () => {
    // Newest first, as cron_logs answers; a skip never started.
    const s = runSeries([run(3, { status: 2, startTime: 0, executionTime: 0 }), run(2, { status: 1, executionTime: 5 }), run(1, { executionTime: 0.5, lateness: 2 })]);
    expect(s.x).to.deep.equal([T + 60, T + 120, T + 180]);
    expect(s.succeeded).to.deep.equal([0.5, null, null]);
    expect(s.failed).to.deep.equal([null, 5, null]);
    expect(s.skipped).to.deep.equal([null, null, 0]);
    expect(s.lateness).to.deep.equal([2, 0.1, null]);
  });

  it('says what the duration chart shows: outcomes, median and longest run', () => {
    const runs = [run(4, { executionTime: 0.3 }), run(3, { status: 1, executionTime: 12.5 }), run(2, { executionTime: 0.1 }), run(1, { status: 2, startTime: 0, executionTime: 0 })];
    expect(durationSummary(runs, 'UTC')).to.equal(
      '4 runs from 2024-10-16 08:31:00 to 2024-10-16 08:34:00 (UTC): 2 succeeded, 1 failed, 1 skipped. Median duration 300 ms, longest 12.5 s at 2024-10-16 08:33:00 (failed).',
    );
    expect(durationSummary([], 'UTC')).to.equal('No run yet: nothing to chart.');
    expect(durationSummary([run(1)], 'Europe/London')).to.match(/^1 run from 2024-10-16 09:31:00 to 2024-10-16 09:31:00 \(Europe\/London\): 1 succeeded, 0 failed\. Median duration 200 ms, longest 200 ms at 2024-10-16 09:31:00\.$/);
  });

  it('says what the lateness chart shows: median, worst, and how many were late', () => {
    const runs = [run(3, { lateness: 0 }), run(2, { lateness: 95 }), run(1, { lateness: 0.4 })];
    expect(latenessSummary(runs, 'UTC')).to.equal('Median lateness 400 ms, most 1 min 35 s at 2024-10-16 08:32:00; 1 run of 3 started more than 60 s after its time.');
    expect(latenessSummary([run(1, { lateness: 0 })], 'UTC')).to.equal('Median lateness none, most none; 0 runs of 1 started more than 60 s after its time.');
    expect(latenessSummary([run(1, { status: 2 })], 'UTC')).to.match(/^No call made yet/);
  });

  it("sums the jobs' hourly counts into the account's, and says which hours were busy or failing", () => {
    const from = 1_729_065_600;
    const a = { from, runs: [1, 0, 4, ...Array(21).fill(0)], failures: [0, 0, 2, ...Array(21).fill(0)] };
    const b = { from, runs: [2, 0, 1, ...Array(21).fill(0)], failures: [1, 0, 0, ...Array(21).fill(0)] };
    const sum = accountHourly([job(a), job(null, 2), job(b, 3)])!;
    expect(sum.from).to.equal(from);
    expect(sum.runs.slice(0, 4)).to.deep.equal([3, 0, 5, 0]);
    expect(sum.failures.slice(0, 4)).to.deep.equal([1, 0, 2, 0]);
    expect(sum.runs).to.have.length(24);
    expect(hourlySummary(sum, 'UTC')).to.equal('8 runs in the last 24 hours (UTC), 3 failed; busiest hour 10:00-11:00 with 5; failures in 2 hours, most at 10:00-11:00 (2).');
    expect(hourlySummary({ from, runs: Array(24).fill(0), failures: Array(24).fill(0) }, 'UTC')).to.equal('No run in the last 24 hours.');
    expect(hourlySummary({ from, runs: [1, ...Array(23).fill(0)], failures: Array(24).fill(0) }, 'UTC')).to.match(/1 run in .* 0 failed; busiest hour 08:00-09:00 with 1; no failure\.$/);
    expect(accountHourly([job(null)])).to.equal(null);
    expect(hourLabel(from, 'Asia/Kolkata')).to.equal('13:30-14:30');
  });

  it("merges a refresh's newest runs into those held, newest first, at most the kept number", () => {
    const held = [run(3), run(2), run(1)];
    const merged = mergeRuns(held, [run(5), run(4), run(3, { status: 1 })], 4);
    expect(merged.map((r) => r.id)).to.deep.equal([5, 4, 3, 2]);
    expect(merged[2]!.status).to.equal(1);
  });
});
