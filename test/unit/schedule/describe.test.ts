import { expect } from 'chai';
import { describeSchedule, parseSchedule } from '../../../shared/schedule/index.ts';

const describe_ = (expression: string, timezone = 'UTC', filter: string | null = null) =>
  describeSchedule(parseSchedule({ expression, timezone, filter }));

describe('describeSchedule', () => {
  it('gives the sentences the dashboard shows', () => {
    const cases: [string, string, string][] = [
      ['5 7 * * 1', 'Europe/London', 'At 07:05 on Monday (Europe/London)'],
      ['15 minutes', 'UTC', 'Every 15 minutes'],
      ['Feb 14, 2030, 7:30', 'UTC', 'Once, at 2030-02-14 07:30 (UTC)'],
      ['manual', 'UTC', 'Only when run manually'],
      ['*/5 * * * *', 'UTC', 'Every 5 minutes'],
      ['*/15 * * * * *', 'UTC', 'Every 15 seconds'],
      ['5 * * * *', 'UTC', 'At minute 5 past every hour'],
      ['5 */2 * * *', 'UTC', 'At minute 5, every 2 hours (UTC)'],
      ['*/3 1,2,3 * * *', 'UTC', 'Every 3 minutes, during hours 1 through 3 (UTC)'],
      ['7 8-16/2 * * *', 'UTC', 'At 08:07, 10:07, 12:07, 14:07 and 16:07 (UTC)'],
      ['30 0 12 * * *', 'Asia/Tokyo', 'At 12:00:30 (Asia/Tokyo)'],
      ['15 9 * * 1-5', 'America/New_York', 'At 09:15 on Monday through Friday (America/New_York)'],
      ['0 9 * * 5-7', 'UTC', 'At 09:00 on Friday through Sunday (UTC)'],
      ['0 12 15,L * *', 'UTC', 'At 12:00 on the 15th and last days of the month (UTC)'],
      ['0 0 13 * 5', 'UTC', 'At 00:00 on the 13th day of the month or on Friday (UTC)'],
      ['0 0 */2 * 1', 'UTC', 'At 00:00 on every 2nd day of the month, if it is a Monday (UTC)'],
      ['30 9 * JAN,jul Mon-fri', 'UTC', 'At 09:30 on Monday through Friday in January and July (UTC)'],
      ['@yearly', 'UTC', 'At 00:00 on January 1 (UTC)'],
      ['R R * * *', 'UTC', 'At a random minute, at a random hour (UTC)'],
      ['0 R2,8-17 * * 1-5', 'UTC', 'At minute 0, at 2 random hours from 8 through 17 on Monday through Friday (UTC)'],
      ['1 min 30 sec', 'UTC', 'Every 1 minute and 30 seconds'],
      ['every hour', 'UTC', 'Every hour'],
      ['1 day 17:05', 'Europe/Paris', 'Every day at 17:05 (Europe/Paris)'],
      ['next Friday 7:05 PM', 'UTC', 'Every Friday at 19:05 (UTC)'],
      ['2 weeks Friday 17:05', 'UTC', 'Every 2 weeks on Friday at 17:05 (UTC)'],
      ['first day of next month 17:05', 'UTC', 'On the first day of every month at 17:05 (UTC)'],
      ['last day of next month 17:05', 'UTC', 'On the last day of every month at 17:05 (UTC)'],
      ['@1905821065', 'Asia/Tokyo', 'Once, at 2030-05-24 11:44:25 (Asia/Tokyo)'],
    ];
    for (const [expression, zone, sentence] of cases) expect(describe_(expression, zone), expression).to.equal(sentence);
  });

  it('quotes the filter and names the zone it is read in', () => {
    expect(describe_('0 8 * * *', 'UTC', "day == 12 and weekday == 'Fri'")).to.equal(
      "At 08:00 (UTC), only when day == 12 and weekday == 'Fri'",
    );
    expect(describe_('*/15 * * * *', 'Asia/Kolkata', 'hour >= 9')).to.equal('Every 15 minutes (Asia/Kolkata), only when hour >= 9');
  });
});
