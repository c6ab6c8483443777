import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { nextRuns, parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';

interface Vector {
  id: string;
  kind: 'crontab' | 'interval' | 'one-time' | 'timestamp' | 'manual' | 'filter';
  expression: string;
  filter: string | null;
  timezone: string;
  from?: string;
  next?: string[];
  valid: boolean;
  note: string;
}

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/schedule.json', import.meta.url), 'utf8')) as {
  vectors: Vector[];
};
const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');

describe('schedule vectors (test/fixtures/schedule.json)', () => {
  it('holds all 114 vectors', () => {
    expect(fixture.vectors).to.have.length(114);
  });

  for (const v of fixture.vectors) {
    it(`${v.id}: ${v.note}`, () => {
      const input = { expression: v.expression, timezone: v.timezone, filter: v.filter, jobId: 1 };
      if (!v.valid) {
        expect(() => parseSchedule(input)).to.throw(ScheduleError);
        return;
      }
      const schedule = parseSchedule(input);
      if (v.kind !== 'filter') expect(schedule.kind).to.equal(v.kind);
      // Ask for one more than listed when none is expected, so "none" is really none.
      const runs = nextRuns(schedule, Date.parse(v.from!), Math.max(v.next!.length, 1));
      expect(runs.map(iso)).to.deep.equal(v.next);
    });
  }

  it('names the field at fault for every invalid vector', () => {
    for (const v of fixture.vectors.filter((x) => !x.valid)) {
      const field = v.kind === 'filter' ? 'filter' : v.id === 'invalid-timezone' ? 'timezone' : 'expression';
      try {
        parseSchedule({ expression: v.expression, timezone: v.timezone, filter: v.filter });
        expect.fail(`${v.id} was accepted`);
      } catch (e) {
        expect(e, v.id).to.be.instanceOf(ScheduleError);
        expect((e as ScheduleError).field, v.id).to.equal(field);
      }
    }
  });
});
