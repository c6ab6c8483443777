import { expect } from 'chai';
import { compileFilter, type FilterVars } from '../../../shared/schedule/filter.ts';
import { parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';

// Friday 2025-09-12 08:30
const friday12: FilterVars = { minute: 30, hour: 8, day: 12, month: 9, weekday: 5 };

function errorOf(src: string): ScheduleError {
  try {
    compileFilter(src);
  } catch (e) {
    expect(e).to.be.instanceOf(ScheduleError);
    expect((e as ScheduleError).field).to.equal('filter');
    return e as ScheduleError;
  }
  return expect.fail(`'${src}' was accepted`);
}

describe('filter parser', () => {
  it('evaluates comparisons, and/or, in and not in', () => {
    const yes = [
      "day == 12 and weekday == 'Fri'",
      "weekday in ['Thu', 'Fri']",
      "weekday not in ['Sat', 'Sun']",
      'month != 1 and hour >= 8 and hour < 9 and minute <= 30 and minute > 29',
      'not (month in [7, 8])',
      "'Fri' == weekday",
      "weekday == 'fri'",
      'day == 1 or day == 12',
      '(((day == 12)))',
    ];
    for (const src of yes) expect(compileFilter(src).test(friday12), src).to.equal(true);
    const no = ["weekday == 'Sat'", 'day in []', 'not (day == 12)', "weekday != 'Fri'", 'month in [7, 8]'];
    for (const src of no) expect(compileFilter(src).test(friday12), src).to.equal(false);
  });

  it("binds 'and' tighter than 'or'", () => {
    const f = compileFilter('minute > 0 and minute < 45 or hour == 0');
    expect(f.test({ ...friday12, minute: 0, hour: 0 })).to.equal(true);
    expect(f.test({ ...friday12, minute: 0, hour: 5 })).to.equal(false);
    expect(f.test({ ...friday12, minute: 15, hour: 5 })).to.equal(true);
  });

  it('reports which variables it reads (the scheduler skips whole hours or days)', () => {
    expect([...compileFilter("weekday == 'Mon' and day > 3").uses].sort()).to.deep.equal(['day', 'weekday']);
  });

  it('rejects problems with the column where they are', () => {
    const cases: [string, number, RegExp][] = [
      ['year == 2025', 1, /unknown variable 'year'; use minute, hour, day, month or weekday/],
      ['day ==', 7, /expected a value but found the end of the filter/],
      ["(day == 1 and weekday == 'Mon'", 31, /expected '\)' to close the '\(' at column 1/],
      ["day == 'Mon'", 5, /compares a number with a string/],
      ['weekday == 5', 9, /compares a string with a number/],
      ["weekday == 'Fry'", 12, /'Fry' is not a weekday/],
      ['day = 1', 5, /unexpected '='; compare with '=='/],
      ['day == 1 && hour == 2', 10, /write 'and', 'or', 'not'/],
      ["weekday == 'Fri", 12, /a string without its closing '/],
      ['day == 1 day == 2', 10, /unexpected 'day'; join conditions with 'and' or 'or'/],
      ['not day == 1', 1, /'not' binds tighter than '==', so write 'not \(...\)'/],
      ['day', 1, /the filter needs a condition/],
      ["weekday < 'Fri'", 9, /'<' needs numbers/],
      ["day in [1, 'Mon']", 12, /holds numbers only/],
      ['day in 5', 8, /'in' needs a list/],
      ['day == 1 and', 13, /expected a value/],
      ["'Mon' == 'Mon'", 1, /compare a variable/],
      ['day in [hour]', 9, /holds numbers only/],
    ];
    for (const [src, column, message] of cases) {
      const e = errorOf(src);
      expect(e.message, src).to.include(`at column ${column}:`);
      expect(e.message, src).to.match(message);
      expect(e.message, src).to.include(`'${src}'`);
    }
  });

  it('is optional: null, empty or blank means no filter', () => {
    for (const filter of [null, undefined, '', '   ']) {
      expect(parseSchedule({ expression: '0 8 * * *', timezone: 'UTC', filter }).filter).to.equal(null);
    }
  });

  it('never evaluates code', () => {
    const e = errorOf('process.exit(1)');
    expect(e.message).to.match(/unknown variable 'process'|unexpected/);
  });
});
