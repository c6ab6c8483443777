import { expect } from 'chai';
import { iso, rejects } from './support.ts';
import { addDuration, nextRuns, parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';

const runs = (expression: string, from: string, count = 3, timezone = 'UTC') =>
  nextRuns(parseSchedule({ expression, timezone }), Date.parse(from), count).map(iso);


describe('English intervals', () => {
  it('overflows months like PHP: Jan 31 + 1 month is Mar 2 (leap year) or Mar 3', () => {
    expect(runs('1 month 17:05', '2024-01-31T10:00:00Z', 2)).to.deep.equal(['2024-03-02T17:05:00Z', '2024-04-02T17:05:00Z']);
    expect(runs('1 month 17:05', '2025-01-31T10:00:00Z', 1)).to.deep.equal(['2025-03-03T17:05:00Z']);
  });

  it('first/last day of next month avoid the overflow', () => {
    expect(runs('first day of next month 17:05', '2024-01-31T10:00:00Z', 2)).to.deep.equal(['2024-02-01T17:05:00Z', '2024-03-01T17:05:00Z']);
    expect(runs('last day of next month', '2024-01-31T10:00:00Z', 2)).to.deep.equal(['2024-02-29T10:00:00Z', '2024-03-31T10:00:00Z']);
    expect(runs('first day of every month 8:00', '2024-10-16T10:00:00Z', 1)).to.deep.equal(['2024-11-01T08:00:00Z']);
  });

  it('accepts singular, plural and abbreviated units, with or without a space', () => {
    const from = '2024-10-16T10:00:00Z';
    for (const [expression, first] of [
      ['1 hours', '2024-10-16T11:00:00Z'],
      ['2 hour', '2024-10-16T12:00:00Z'],
      ['90 secs', '2024-10-16T10:01:30Z'],
      ['5 mins', '2024-10-16T10:05:00Z'],
      ['5min', '2024-10-16T10:05:00Z'],
      ['1 hr 1 sec', '2024-10-16T11:00:01Z'],
      ['1 week', '2024-10-23T10:00:00Z'],
      ['1 fortnight', '2024-10-30T10:00:00Z'],
      ['1 year', '2025-10-16T10:00:00Z'],
      ['every hour', '2024-10-16T11:00:00Z'],
      ['every day at 9:00', '2024-10-17T09:00:00Z'],
      ['tomorrow 9:00', '2024-10-17T09:00:00Z'],
      ['1 day noon', '2024-10-17T12:00:00Z'],
      ['next month', '2024-11-16T10:00:00Z'],
      ['1 day 2 hours 30 min', '2024-10-17T12:30:00Z'],
    ]) {
      expect(runs(expression!, from, 1), expression).to.deep.equal([first]);
    }
  });

  it('reads the 12-hour clock and weekdays like strtotime', () => {
    expect(runs('next Friday 12:00 AM', '2024-10-16T10:00:00Z', 1)).to.deep.equal(['2024-10-18T00:00:00Z']);
    expect(runs('next Friday 12 PM', '2024-10-16T10:00:00Z', 1)).to.deep.equal(['2024-10-18T12:00:00Z']);
    // "every Friday" is "next Friday"; a weekday without a time means 00:00.
    expect(runs('every Friday', '2024-10-18T17:05:00Z', 1)).to.deep.equal(['2024-10-25T00:00:00Z']);
    expect(runs('every 2 weeks on Friday at 17:05', '2024-10-16T10:00:00Z', 2)).to.deep.equal(['2024-11-01T17:05:00Z', '2024-11-15T17:05:00Z']);
  });

  it('rejects what cannot run or cannot move forward, saying where', () => {
    rejects('Friday 17:05', /a bare weekday does not move forward/);
    rejects('17:05', /a time of day needs a step of days/);
    rejects('1 hour 17:05', /a time of day needs a step of days/);
    rejects('-1 day', /at column 1: an interval moves forward/);
    rejects('0 minutes', /the interval is zero/);
    rejects('every', /expected a schedule after 'every'/);
    rejects('next', /'next' needs a unit or a weekday/);
    rejects('5 apples', /at column 3: expected a unit/);
    rejects('first day of this month', /at column 14: unknown word 'this'/);
    rejects('1 day 17:05 18:00', /at column 13: a second time of day/);
    rejects('next Friday Monday', /at column 13: only one weekday/);
    rejects('13:00 PM', /a 12-hour clock runs from 1 to 12/);
    rejects('1 day 25:00', /the hour must be 0-23/);
    rejects('1 day @ 9', /at column 7: unexpected '@'/);
    rejects('day', /'day' needs an amount, e.g. '1 day'/);
    // Words that name members of Object.prototype are plain unknown words.
    rejects('5 constructor', /at column 3: expected a unit/);
    rejects('next toString', /'next' needs a unit or a weekday/);
    rejects('constructor 14, 2030', /unexpected 'constructor' in a date|unknown word 'constructor'/);
  });
});

describe('one-time dates', () => {
  const from = '2024-10-16T10:00:00Z';
  it('reads the usual ways of writing a date, in the job zone', () => {
    for (const [expression, zone, at] of [
      ['Feb 14, 2030, 7:30', 'UTC', '2030-02-14T07:30:00Z'],
      ['14 Feb 2030 07:30', 'Europe/Paris', '2030-02-14T06:30:00Z'],
      ['2030-02-14 07:30', 'UTC', '2030-02-14T07:30:00Z'],
      ['02/14/2030 7:30 PM', 'UTC', '2030-02-14T19:30:00Z'],
      ['Friday, Feb 14, 2030 at 7:30', 'UTC', '2030-02-14T07:30:00Z'],
      ['February 14th 2030', 'UTC', '2030-02-14T00:00:00Z'],
      // An explicit offset wins over the job zone.
      ['2030-02-14T07:30:00Z', 'Europe/Paris', '2030-02-14T07:30:00Z'],
      ['2030-02-14T07:30+01:00', 'UTC', '2030-02-14T06:30:00Z'],
    ]) {
      const s = parseSchedule({ expression: expression!, timezone: zone! });
      expect(s.kind, expression).to.equal('one-time');
      expect(nextRuns(s, Date.parse(from), 2).map(iso), expression).to.deep.equal([at]);
    }
  });

  it('takes the earlier instant of a repeated wall time', () => {
    expect(runs('Nov 3, 2030 1:30 AM', from, 1, 'America/New_York')).to.deep.equal(['2030-11-03T05:30:00Z']);
  });

  it('rejects dates that do not exist', () => {
    rejects('Feb 30, 2030', /February 30, 2030 does not exist/);
    rejects('2030-13-01', /there is no month 13/);
    rejects('Feb 14, 2030, 25:00', /at column 15: the hour must be 0-23/);
    rejects('Feb 2030', /needs a month, a day and a year/);
    rejects('Feb 14, 2030 soon', /at column 14: unexpected 'soon' in a date/);
  });
});

describe('addDuration (cron_pause `for`)', () => {
  it('adds hours and less as elapsed time, days and more on the wall clock', () => {
    // London falls back on 2024-10-27: one hour after 01:30 BST is 01:30 GMT.
    expect(iso(addDuration('1 hour', Date.parse('2024-10-27T00:30:00Z'), 'Europe/London'))).to.equal('2024-10-27T01:30:00Z');
    expect(iso(addDuration('15 minutes', Date.parse('2024-10-16T10:00:00Z'), 'UTC'))).to.equal('2024-10-16T10:15:00Z');
    // New York springs forward on 2024-03-10: two days keep 10:00 local, 47 hours later.
    expect(iso(addDuration('2 days', Date.parse('2024-03-09T15:00:00Z'), 'America/New_York'))).to.equal('2024-03-11T14:00:00Z');
    expect(iso(addDuration('1 week', Date.parse('2024-10-16T10:00:00Z'), 'UTC'))).to.equal('2024-10-23T10:00:00Z');
  });

  it('rejects what is not a duration', () => {
    for (const text of ['next Friday', '1 day 17:05', 'every blue moon', '', 'Feb 14, 2030', 'manual']) {
      expect(() => addDuration(text, 0, 'UTC'), text)
        .to.throw(ScheduleError)
        .with.property('field', 'expression');
    }
    expect(() => addDuration('1 hour', 0, 'Mars/Base')).to.throw(ScheduleError).with.property('field', 'timezone');
  });
});
