import { expect } from 'chai';
import { nextRuns, parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';
import { drawDistinct, drawSeed } from '../../../shared/schedule/random.ts';
import { compiled } from '../../../shared/schedule/schedule.ts';

const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');
const cronOf = (expression: string, jobId: number, timezone = 'UTC') => compiled(parseSchedule({ expression, timezone, jobId })).cron!;

describe('random R fields', () => {
  it('draw the same values for a job and a day in every process (pinned: the algorithm is a contract)', () => {
    const cron = cronOf('R R * * *', 1);
    expect(cron.drawnValues(2025, 1, 1)).to.deep.equal({ minutes: [21], hours: [4] });
    expect(cron.drawnValues(2025, 1, 2)).to.deep.equal({ minutes: [52], hours: [16] });
    expect(cronOf('R2 R3,8-17 * * *', 123456789012).drawnValues(2025, 1, 1)).to.deep.equal({ minutes: [7, 33], hours: [9, 10, 12] });
    expect(nextRuns(parseSchedule({ expression: 'R R * * *', timezone: 'UTC', jobId: 1 }), Date.parse('2025-01-01T00:00:00Z'), 2).map(iso))
      .to.deep.equal(['2025-01-01T04:21:00Z', '2025-01-02T16:52:00Z']);
  });

  it('spread jobs over the hour and vary from day to day', () => {
    const byJob = new Set<number>();
    for (let job = 0; job < 200; job++) byJob.add(cronOf('R * * * *', job).drawnValues(2025, 3, 1).minutes[0]!);
    expect(byJob.size).to.be.greaterThan(40);
    const byDay = new Set<number>();
    const cron = cronOf('R * * * *', 7);
    for (let day = 1; day <= 28; day++) byDay.add(cron.drawnValues(2025, 2, day).minutes[0]!);
    expect(byDay.size).to.be.greaterThan(10);
  });

  it('use the high bits of large job ids', () => {
    const seeds = new Set([1, 2 ** 32 + 1, 2 ** 33 + 1].map((id) => drawSeed(id, 2025, 1, 1, 'minute')));
    expect(seeds.size).to.equal(3);
  });

  it('Rn draws n distinct values; R,list and Rn,list draw from the list', () => {
    expect(drawDistinct([10, 20, 30], 3, 99)).to.deep.equal([10, 20, 30]);
    for (let job = 0; job < 50; job++) {
      const { minutes, hours } = cronOf('R5 R,1-7 * * *', job).drawnValues(2025, 6, 1);
      expect(new Set(minutes).size).to.equal(5);
      expect(hours).to.have.length(1);
      expect(hours[0]).to.be.within(1, 7);
      expect(cronOf('R3,10,20,30 0 * * *', job).drawnValues(2025, 6, 1).minutes).to.deep.equal([10, 20, 30]);
      expect(cronOf('R2,*/15 0 * * *', job).drawnValues(2025, 6, 1).minutes.every((m) => m % 15 === 0)).to.equal(true);
    }
  });

  it('run n x m times a day for Rn minutes and Rm hours', () => {
    const s = parseSchedule({ expression: 'R2 R3 * * *', timezone: 'UTC', jobId: 9 });
    const from = Date.parse('2025-06-01T00:00:00Z');
    const day = nextRuns(s, from - 1, 20).filter((t) => t < from + 86400000);
    expect(day).to.have.length(6);
    const { minutes, hours } = compiled(s).cron!.drawnValues(2025, 6, 1);
    expect(day.map((t) => [new Date(t).getUTCHours(), new Date(t).getUTCMinutes()])).to.deep.equal(
      hours.flatMap((h) => minutes.map((m) => [h, m])),
    );
  });

  it('count as fixed hours for DST: a drawn 01:30 runs once on the day New York falls back', () => {
    const s = parseSchedule({ expression: 'R,30 R,1 * * *', timezone: 'America/New_York', jobId: 5 });
    expect(nextRuns(s, Date.parse('2024-11-02T12:00:00Z'), 2).map(iso)).to.deep.equal(['2024-11-03T05:30:00Z', '2024-11-04T06:30:00Z']);
  });

  it('reject draws that cannot be made', () => {
    for (const [expression, message] of [
      ['R0 * * * *', /R0 draws no value/],
      ['R61 * * * *', /R61 draws 61 distinct values but only 60/],
      ['0 R4,1-3 * * *', /hour field 'R4,1-3' at column 3: R4 draws 4 distinct values but only 3/],
      ['0 0 * R *', /R \(random\) is allowed only in the minute and hour fields/],
      ['R, * * * *', /R, needs a list/],
    ] as const) {
      expect(() => parseSchedule({ expression, timezone: 'UTC' }), expression).to.throw(ScheduleError, message);
    }
  });
});
