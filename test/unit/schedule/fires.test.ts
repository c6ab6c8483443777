import { expect } from 'chai';
import { compileFilter } from '../../../shared/schedule/filter.ts';
import { nextFilterMinute, SEARCH_BUDGET } from '../../../shared/schedule/filterSearch.ts';
import { checkFires, parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';

const NOW = Date.parse('2026-11-23T16:00:00Z');

/** The ScheduleError checkFires throws at NOW, or null when the schedule is accepted. */
function refusal(expression: string, filter: string | null = null, timezone = 'UTC'): ScheduleError | null {
  try {
    checkFires(parseSchedule({ expression, timezone, filter }), NOW);
    return null;
  } catch (e) {
    if (e instanceof ScheduleError) return e;
    throw e;
  }
}

describe('checkFires: a new or edited schedule must fire within a year', () => {
  it('refuses a filter that never lets a run through, blaming the filter', () => {
    for (const [expression, filter, timezone] of [
      ['1 second', 'hour == 1 and hour == 2', 'UTC'],
      ['1 second', 'hour == 1 and hour == 2', 'Europe/Paris'],
      ['* * * * * *', 'month == 2 and day == 30', 'America/New_York'],
      ['*/2 * * * *', 'minute in [1, 3, 5, 7, 59]', 'UTC'],
      ['15 minutes', "minute == hour and hour == day and day > 23", 'Asia/Kathmandu'],
    ]) {
      const e = refusal(expression!, filter, timezone);
      expect(e?.field, `${expression} | ${filter}`).to.equal('filter');
      expect(e!.message).to.match(/lets no run of .* through within a year \(until 2027-11-2\d \d\d:\d\d /);
    }
  });

  it('blames the expression when it does not fire within a year by itself', () => {
    // The first of February on a Sunday: 2026, then 2037.
    const e = refusal('0 0 */29 2 */7');
    expect(e?.field).to.equal('expression');
    expect(e!.message).to.match(/^'0 0 \*\/29 2 \*\/7' never fires within a year/);
    expect(refusal('0 0 */29 2 */7', 'hour == 0')?.field).to.equal('expression');
  });

  it('accepts what fires within the year, and a February 29 up to 8 years away', () => {
    expect(refusal('0 0 1 1 *')).to.equal(null);
    expect(refusal('0 0 29 2 *')).to.equal(null);
    expect(refusal('1 second', 'month == 2 and day == 29')).to.equal(null);
    expect(refusal('1 second', 'month == 12 and day == 31 and hour == 23 and minute == 59', 'Pacific/Chatham')).to.equal(null);
    expect(refusal('30 2 * * *', 'hour == 3', 'America/New_York')?.field, 'a DST gap in March runs it at 03:00').to.equal(undefined);
  });

  it('gives an interval at least until its first candidate; one-time, @timestamp and manual are not checked', () => {
    expect(refusal('2 years', 'month == 11')).to.equal(null);
    expect(refusal('2 years', 'month == 2')?.field).to.equal('filter');
    expect(refusal('2 years')).to.equal(null);
    expect(refusal('Feb 14, 2040 7:30', 'hour == 1')).to.equal(null);
    expect(refusal('@2000000000')).to.equal(null);
    expect(refusal('manual', 'hour == 1 and hour == 2')).to.equal(null);
  });

  it('a search stops when its budget is spent, and says so', () => {
    const budget = { left: 3, exhausted: false };
    const at = nextFilterMinute(compileFilter('month == 12 and day == 31'), NOW, NOW + 400 * 86_400_000, null, budget);
    expect(at).to.be.NaN;
    expect(budget.exhausted).to.equal(true);
    expect(SEARCH_BUDGET).to.be.at.least(100_000);
  });
});
