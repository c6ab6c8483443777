import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { describeSchedule, nextRun, nextRuns, parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';
import { isSharable } from '../../../shared/schedule/index.ts';

// A second before the hour, so a run at minute 0 of the hour counts.
const FROM = Date.UTC(2026, 10, 22, 23, 59, 59);
const runsOf = (expression: string, jobId: number, count = 3, timezone = 'UTC') =>
  nextRuns(parseSchedule({ expression, timezone, filter: null, jobId }), FROM, count);
const iso = (ms: number) => new Date(ms).toISOString();

describe('stable spread (H)', () => {
  it('places a bare H by the job id: the same for one job, different across jobs', () => {
    const a = runsOf('H * * * *', 42);
    expect(runsOf('H * * * *', 42)).to.deep.equal(a);
    const minuteOf = (jobId: number) => new Date(runsOf('H * * * *', jobId, 1)[0]!).getUTCMinutes();
    const minutes = new Set(Array.from({ length: 50 }, (_, i) => minuteOf(i + 1)));
    expect(minutes.size).to.be.greaterThan(20);
    // Every hour at the one placed minute.
    expect(a.map((t) => new Date(t).getUTCMinutes())).to.deep.equal([minuteOf(42), minuteOf(42), minuteOf(42)]);
    expect(a[1]! - a[0]!).to.equal(3_600_000);
  });

  it('keeps H(a-b) within its range and H/n as a series of step n from an offset below n', () => {
    for (let jobId = 1; jobId <= 300; jobId++) {
      const [t] = runsOf('H(10-19) 3 * * *', jobId, 1);
      const minute = new Date(t!).getUTCMinutes();
      expect(minute, `job ${jobId}`).to.be.within(10, 19);
      const quarter = runsOf('H/15 * * * *', jobId, 4).map((x) => new Date(x).getUTCMinutes());
      expect(quarter[0], `job ${jobId}`).to.be.below(15);
      expect(quarter).to.deep.equal([0, 15, 30, 45].map((m) => m + quarter[0]!));
      const ranged = runsOf('H(0-29)/10 * * * *', jobId, 3).map((x) => new Date(x).getUTCMinutes());
      expect(ranged[0]).to.be.below(10);
      expect(ranged).to.deep.equal([0, 10, 20].map((m) => m + ranged[0]!));
    }
  });

  it('uses one hash per field, so H H differs from a diagonal', () => {
    const pairs = Array.from({ length: 200 }, (_, i) => {
      const d = new Date(runsOf('H H * * *', i + 1, 1)[0]!);
      return d.getUTCMinutes() % 24 === d.getUTCHours();
    });
    expect(pairs.filter(Boolean).length).to.be.below(40);
  });

  it('keeps a day-of-month H within 1-28 so it exists in every month', () => {
    for (let jobId = 1; jobId <= 500; jobId++) {
      const days = runsOf('0 0 H * *', jobId, 13).map((t) => new Date(t).getUTCDate());
      expect(new Set(days).size).to.equal(1);
      expect(days[0]).to.be.within(1, 28);
    }
  });

  it('spreads 10,000 jobs written H * * * * over the hour with no minute above twice the mean', () => {
    const perMinute = new Array<number>(60).fill(0);
    for (let jobId = 1; jobId <= 10_000; jobId++) {
      perMinute[new Date(nextRun(parseSchedule({ expression: 'H * * * *', timezone: 'UTC', filter: null, jobId }), FROM)!).getUTCMinutes()]!++;
    }
    const mean = 10_000 / 60;
    expect(Math.max(...perMinute)).to.be.at.most(2 * mean);
    expect(Math.min(...perMinute)).to.be.greaterThan(0);
  });

  it('gives the same times in another process (every replica computes them alike)', () => {
    const here = runsOf('H H(8-17) * * 1-5', 987_654_321, 5).map(iso);
    const script = `
      import { nextRuns, parseSchedule } from './shared/schedule/index.ts';
      const s = parseSchedule({ expression: 'H H(8-17) * * 1-5', timezone: 'UTC', filter: null, jobId: 987654321 });
      console.log(JSON.stringify(nextRuns(s, ${FROM}, 5).map((t) => new Date(t).toISOString())));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).to.deep.equal(here);
  });

  it('is not shared between jobs and describes the placed value', () => {
    const s = parseSchedule({ expression: 'H 9 * * *', timezone: 'UTC', filter: null, jobId: 7 });
    expect(isSharable(s)).to.equal(false);
    const minute = new Date(nextRun(s, FROM)!).getUTCMinutes();
    expect(describeSchedule(s)).to.equal(`At 09:${String(minute).padStart(2, '0')} (UTC)`);
  });

  it('refuses malformed H items, naming the field', () => {
    const bad: [string, RegExp][] = [
      ['H(20-10) * * * *', /minute field 'H\(20-10\)'.*backwards/],
      ['H(0-99) * * * *', /minute field.*99 is outside 0-59/],
      ['H/0 * * * *', /minute field.*step of 0/],
      ['H/ * * * *', /minute field.*whole number/],
      ['0 R,H * * *', /hour field.*H cannot be combined with R/],
    ];
    for (const [expression, message] of bad) {
      expect(() => parseSchedule({ expression, timezone: 'UTC', filter: null, jobId: 1 }), expression)
        .to.throw(ScheduleError)
        .with.property('message')
        .that.matches(message);
    }
  });
});
