import { expect } from 'chai';
import { parseSchedule, pointsPerDay } from '../../../shared/schedule/index.ts';

const points = (expression: string, filter: string | null = null, timezone = 'UTC') =>
  pointsPerDay(parseSchedule({ expression, timezone, filter, jobId: 3 }));

describe('pointsPerDay (docs/api.md (Cron jobs): runs per day, rounded up, minimum 1)', () => {
  it('counts crontab runs per day', () => {
    expect(points('*/5 * * * *')).to.equal(288);
    expect(points('* * * * *')).to.equal(1440);
    expect(points('*/15 * * * * *')).to.equal(5760);
    expect(points('@hourly', null, 'Asia/Kathmandu')).to.equal(24);
    expect(points('*/3 1,2,3 * * *')).to.equal(60);
  });

  it('averages over the days of a year and rounds up', () => {
    // 9 runs on each of 2025's 261 weekdays: 6.4 a day on average.
    expect(points('0 9-17 * * 1-5')).to.equal(7);
    expect(points('0 12 * * 1-5')).to.equal(1);
    expect(points('@yearly')).to.equal(1);
  });

  it('counts R draws and filters', () => {
    expect(points('R3 * * * *')).to.equal(72);
    expect(points('R2 R,8-17 * * *')).to.equal(2);
    expect(points('*/15 * * * *', 'hour >= 9 and hour <= 17')).to.equal(36);
    expect(points('0 * * * *', "hour >= 9 and hour <= 17 and weekday not in ['Sat', 'Sun']", 'Asia/Kolkata')).to.equal(7);
  });

  it('derives interval points from the step', () => {
    expect(points('10 seconds')).to.equal(8640);
    expect(points('15 minutes')).to.equal(96);
    expect(points('65 minutes')).to.equal(23);
    expect(points('1 min 30 sec')).to.equal(960);
    expect(points('1 minute', 'hour == 9')).to.equal(60);
    expect(points('1 day 17:05')).to.equal(1);
    expect(points('next Friday 17:05')).to.equal(1);
  });

  it('is 1 for one-time, @timestamp and manual', () => {
    expect(points('Feb 14, 2030, 7:30')).to.equal(1);
    expect(points('@1905821065')).to.equal(1);
    expect(points('manual')).to.equal(1);
  });
});
