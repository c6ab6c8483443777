import { expect } from 'chai';
import { parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';

/** An instant as the vectors write it (no milliseconds). */
export const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');

/** The expression must be refused as an `expression` error whose message matches. */
export function rejects(expression: string, message: RegExp) {
  try {
    parseSchedule({ expression, timezone: 'UTC' });
  } catch (e) {
    expect(e).to.be.instanceOf(ScheduleError);
    expect((e as ScheduleError).field).to.equal('expression');
    expect((e as ScheduleError).message, expression).to.match(message);
    return;
  }
  expect.fail(`'${expression}' was accepted`);
}
