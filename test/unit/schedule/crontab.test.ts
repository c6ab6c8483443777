import { expect } from 'chai';
import { iso, rejects } from './support.ts';
import { nextRun, nextRuns, parseSchedule } from '../../../shared/schedule/index.ts';

const runs = (expression: string, timezone: string, from: string, count: number, filter: string | null = null) =>
  nextRuns(parseSchedule({ expression, timezone, filter }), Date.parse(from), count).map(iso);


describe('crontab', () => {
  it('tells crontab from English by its first fields, not by letters alone', () => {
    expect(parseSchedule({ expression: '1 day 2 hours 30 min', timezone: 'UTC' }).kind).to.equal('interval');
    expect(parseSchedule({ expression: '0 0 ? * 1', timezone: 'UTC' }).kind).to.equal('crontab');
    expect(parseSchedule({ expression: '@DAILY', timezone: 'UTC' }).kind).to.equal('crontab');
    rejects('0 0 * Jam *', /month field 'Jam' at column 7: unknown month name/);
    rejects('* *', /5 fields .* not 2/);
  });

  it('points at the field and column of a mistake', () => {
    rejects('0 0 * * Fry', /weekday field 'Fry' at column 9/);
    rejects('5-2 * * * *', /minute field '5-2' at column 1: the range 5-2 goes backwards/);
    rejects('0 1,,2 * * *', /hour field '1,,2' at column 3: an empty list item/);
    rejects('*/60 * * * *', /the step \/60 exceeds 59/);
    rejects('0 0 R * *', /day field 'R' at column 5: R \(random\) is allowed only in the minute and hour fields/);
    rejects('0 0 L-5 * *', /L cannot be part of a range/);
    rejects('0 0 * * 1#2', /weekday field '1#2' at column 9: '1#2' is not a value, range/);
  });

  it('rejects a crontab that can never run, instead of accepting a silent job', () => {
    rejects('0 0 31 2 *', /never occurs in month '2'/);
    rejects('0 0 31 4,6,9,11 *', /never run/);
    // Day and weekday both restricted are ORed: the weekday still fires.
    expect(parseSchedule({ expression: '0 0 30 2 1', timezone: 'UTC' }).kind).to.equal('crontab');
  });

  it('reads a/n as a-max/n (Vixie)', () => {
    expect(runs('5/15 * * * *', 'UTC', '2024-10-16T10:00:00Z', 5)).to.deep.equal([
      '2024-10-16T10:05:00Z', '2024-10-16T10:20:00Z', '2024-10-16T10:35:00Z', '2024-10-16T10:50:00Z', '2024-10-16T11:05:00Z',
    ]);
  });

  it('6 fields: a skipped match runs at the jump instant itself, 02:00:00 and not 02:00:15', () => {
    expect(runs('15 30 1 * * *', 'Europe/London', '2024-03-30T12:00:00Z', 2)).to.deep.equal([
      '2024-03-31T01:00:00Z', '2024-04-01T00:30:15Z',
    ]);
  });

  it('fixed hours: a reference inside the repeated hour does not rerun its second pass', () => {
    // 06:15Z is 01:15 EST, the second pass of 01:00-01:59 on 2024-11-03.
    expect(runs('*/10 1 * * *', 'America/New_York', '2024-11-03T06:15:00Z', 1)).to.deep.equal(['2024-11-04T06:00:00Z']);
  });

  it('hour field *: a reference inside the repeated hour continues in real time', () => {
    expect(runs('30 * * * *', 'America/New_York', '2024-11-03T06:15:00Z', 2)).to.deep.equal([
      '2024-11-03T06:30:00Z', '2024-11-03T07:30:00Z',
    ]);
  });

  it('fixed hours in a zone whose clocks jump at midnight (Santiago): the day still runs', () => {
    // 2024-09-08 00:00 does not exist in Santiago: clocks go from 23:59:59 -04 to 01:00 -03 (04:00Z).
    expect(runs('0 0 * * *', 'America/Santiago', '2024-09-07T12:00:00Z', 2)).to.deep.equal([
      '2024-09-08T04:00:00Z', '2024-09-09T03:00:00Z',
    ]);
  });

  it('with a filter, gives up after 10 years of candidates instead of looping', () => {
    const s = parseSchedule({ expression: '* * * * *', timezone: 'Europe/London', filter: 'minute == 61' });
    expect(nextRun(s, Date.parse('2024-01-01T00:00:00Z'))).to.equal(null);
    const rare = parseSchedule({ expression: '0 0 1 1 *', timezone: 'UTC', filter: 'day == 2' });
    expect(nextRun(rare, Date.parse('2024-01-01T00:00:00Z'))).to.equal(null);
  });

  it('a filter over seconds skips whole minutes it drops, without missing one it keeps', () => {
    expect(runs('*/20 * * * * *', 'UTC', '2024-10-16T10:58:30Z', 4, 'minute == 0')).to.deep.equal([
      '2024-10-16T11:00:00Z', '2024-10-16T11:00:20Z', '2024-10-16T11:00:40Z', '2024-10-16T12:00:00Z',
    ]);
  });
});
