import { expect } from 'chai';
import { excerpt, formatDuration, formatLateness, formatTime, matches, resultSummary, statusGroup, statusText, type JobRecord } from '../../../services/gateway/dashboard/src/format.ts';

describe('dashboard: formatting helpers', () => {
  it('writes times as YYYY-MM-DD HH:MM:SS in the zone asked, "-" for none', () => {
    const t = Date.UTC(2026, 2, 29, 0, 59, 59) / 1000;
    expect(formatTime(t, 'UTC')).to.equal('2026-03-29 00:59:59');
    expect(formatTime(t, 'Europe/London')).to.equal('2026-03-29 00:59:59');
    expect(formatTime(t + 1, 'Europe/London')).to.equal('2026-03-29 02:00:00'); // the DST jump
    expect(formatTime(Date.UTC(2026, 0, 1, 0, 0, 0) / 1000, 'America/New_York')).to.equal('2025-12-31 19:00:00');
    for (const none of [null, undefined, 0, Number.NaN]) expect(formatTime(none)).to.equal('-');
  });

  it('writes durations and lateness in units a reader takes in at a glance', () => {
    expect(formatDuration(0.0123)).to.equal('12 ms');
    expect(formatDuration(2.44)).to.equal('2.4 s');
    expect(formatDuration(185)).to.equal('3 min 05 s');
    expect(formatDuration(null)).to.equal('-');
    expect(formatLateness(100, 100)).to.equal('on time');
    expect(formatLateness(100, 103)).to.equal('+3.0 s');
    expect(formatLateness(0, 103)).to.equal('-');
  });

  it('folds whitespace and cuts long text with an ellipsis', () => {
    expect(excerpt('a\n\n b\tc')).to.equal('a b c');
    expect(excerpt('x'.repeat(10), 5)).to.equal('xxxx…');
    expect(excerpt(undefined)).to.equal('');
  });

  it('names statuses and groups them as the filter does', () => {
    expect([0, 1, 4, 5, 6].map(statusText)).to.deep.equal(['enabled', 'disabled', 'disabled (failures)', 'paused', 'stopped']);
    expect([0, 1, 4, 5, 6].map(statusGroup)).to.deep.equal(['enabled', 'disabled', 'disabled', 'paused', 'disabled']);
    expect(statusText(9)).to.equal('status 9');
  });

  it('sums up a run without saying the status twice', () => {
    expect(resultSummary({ status: 0, willRetry: false, httpStatus: 200, error: '' })).to.equal('succeeded (HTTP 200)');
    expect(resultSummary({ status: 1, willRetry: true, httpStatus: 500, error: 'HTTP 500' })).to.equal('failed, will retry (HTTP 500)');
    expect(resultSummary({ status: 1, willRetry: false, httpStatus: 0, error: 'connect ECONNREFUSED' })).to.equal('failed: connect ECONNREFUSED');
    expect(resultSummary({ status: 2, willRetry: false, httpStatus: 0, error: 'instances' })).to.equal('skipped: instances');
  });

  it('filters jobs by text, group and status', () => {
    const job = (id: number, over: Partial<JobRecord>): JobRecord => ({ id, name: '', url: 'http://x', expression: '* * * * *', timezone: 'UTC', group: null, status: 0, fail: 0, nextRun: null, ...over });
    const jobs = [job(1, { name: 'Backup', group: 3 }), job(2, { url: 'https://api.example/ping', status: 5 }), job(12, { expression: 'manual', status: 4 })];
    const pick = (filter: Partial<{ text: string; group: string; status: string }>) => jobs.filter((j) => matches(j, { text: '', group: '', status: '', ...filter })).map((j) => j.id);
    expect(pick({})).to.deep.equal([1, 2, 12]);
    expect(pick({ text: 'backup' })).to.deep.equal([1]);
    expect(pick({ text: 'EXAMPLE' })).to.deep.equal([2]);
    expect(pick({ text: '12' })).to.deep.equal([12]);
    expect(pick({ text: 'manual' })).to.deep.equal([12]);
    expect(pick({ group: '3' })).to.deep.equal([1]);
    expect(pick({ group: 'none' })).to.deep.equal([2, 12]);
    expect(pick({ status: 'paused' })).to.deep.equal([2]);
    expect(pick({ status: 'disabled', group: 'none' })).to.deep.equal([12]);
  });
});
