import { expect } from 'chai';
import { healthState, relativeTime, sortJobs, totals, type JobWithHealth } from '../../../services/gateway/dashboard/src/health.ts';

const NOW = 1_800_000_000;
const job = (over: Partial<JobWithHealth> = {}): JobWithHealth => ({
  id: 1,
  name: 'a',
  url: 'https://example.com/',
  expression: '* * * * *',
  timezone: 'UTC',
  group: null,
  status: 0,
  fail: 0,
  nextRun: NOW + 30,
  lastResult: null,
  recentOutcomes: [],
  runs24h: 0,
  failures24h: 0,
  groupName: null,
  ...over,
});
const result = (status: number, lateness = 0) => ({ id: 1, time: NOW - 60, startTime: NOW - 60, status, httpStatus: 200, error: '', output: '', executionTime: 0.1, attempt: 1, willRetry: false, lateness });

describe('dashboard health', () => {
  it('names the state: the status the API sets first, then failures, then lateness', () => {
    expect(healthState(job(), NOW)).to.equal('ok');
    expect(healthState(job({ status: 1 }), NOW)).to.equal('disabled');
    expect(healthState(job({ status: 4, fail: 20 }), NOW)).to.equal('disabled-failures');
    expect(healthState(job({ status: 5, fail: 3 }), NOW)).to.equal('paused');
    expect(healthState(job({ status: 6 }), NOW)).to.equal('stopped');
    expect(healthState(job({ fail: 14 }), NOW)).to.equal('failing');
    expect(healthState(job({ lastResult: result(1) }), NOW)).to.equal('failing');
    expect(healthState(job({ nextRun: NOW - 120 }), NOW)).to.equal('late');
    expect(healthState(job({ lastResult: result(0, 90) }), NOW)).to.equal('late');
    expect(healthState(job({ lastResult: result(0, 2) }), NOW)).to.equal('ok');
  });

  it('says times relatively, both ways', () => {
    expect(relativeTime(NOW + 180, NOW)).to.equal('in 3 min');
    expect(relativeTime(NOW - 120, NOW)).to.equal('2 min ago');
    expect(relativeTime(NOW - 2, NOW)).to.equal('now');
    expect(relativeTime(NOW - 45, NOW)).to.equal('45 s ago');
    expect(relativeTime(NOW + 3 * 3600, NOW)).to.equal('in 3 h');
    expect(relativeTime(NOW - 86_400, NOW)).to.equal('1 day ago');
    expect(relativeTime(NOW + 5 * 86_400, NOW)).to.equal('in 5 days');
    expect(relativeTime(null, NOW)).to.equal('-');
  });

  it('sorts by a column either way, ties by id, and counts the totals', () => {
    const jobs = [job({ id: 3, name: 'b', fail: 2 }), job({ id: 1, name: 'a', status: 5 }), job({ id: 2, name: 'b', runs24h: 5, failures24h: 1 })];
    expect(sortJobs(jobs, 'name', false, NOW).map((j) => j.id)).to.deep.equal([1, 2, 3]);
    expect(sortJobs(jobs, 'name', true, NOW).map((j) => j.id)).to.deep.equal([2, 3, 1]);
    expect(sortJobs(jobs, 'state', false, NOW).map((j) => j.id)).to.deep.equal([3, 2, 1]);
    const t = totals(jobs, NOW);
    expect(t).to.deep.include({ runs: 5, failures: 1 });
    expect(t.byState).to.include({ failing: 1, ok: 1, paused: 1 });
  });
});
