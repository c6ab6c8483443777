import { expect } from 'chai';
import { nextByRule, nextCronRun } from '../../../shared/schedule/cronRuns.ts';
import { Crontab } from '../../../shared/schedule/crontab.ts';
import { dstMarks, nextRuns, parseSchedule, ScheduleError } from '../../../shared/schedule/index.ts';
import { getZone } from '../../../shared/schedule/zone.ts';

type Gap = 'classic' | 'shift' | 'skip';
type Overlap = 'classic' | 'first' | 'last' | 'both';

const runs = (expression: string, timezone: string, from: string, count: number, gap: Gap = 'classic', overlap: Overlap = 'classic') =>
  nextRuns(parseSchedule({ expression, timezone, filter: null, jobId: 1, dst: { gap, overlap } }), Date.parse(from), count).map((t) =>
    new Date(t).toISOString().replace('.000', ''),
  );

/**
 * Each case: a crontab, a zone and the night of a change, with the runs every rule gives. The
 * instants were worked out by hand from the zone's offsets (named in each comment).
 */
describe('DST by choice, per job', () => {
  describe('gaps: shift or skip', () => {
    it('Europe/London, 2026-03-29: 01:00 GMT jumps to 02:00 BST', () => {
      // Fixed hour 01:30 does not exist that night.
      expect(runs('30 1 * * *', 'Europe/London', '2026-03-28T12:00:00Z', 2)).to.deep.equal(['2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z']);
      expect(runs('30 1 * * *', 'Europe/London', '2026-03-28T12:00:00Z', 2, 'shift')).to.deep.equal(['2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z']);
      expect(runs('30 1 * * *', 'Europe/London', '2026-03-28T12:00:00Z', 2, 'skip')).to.deep.equal(['2026-03-30T00:30:00Z', '2026-03-31T00:30:00Z']);
      // `*` hours skip by default; shift puts the skipped 01:30 at the jump.
      expect(runs('30 * * * *', 'Europe/London', '2026-03-29T00:00:00Z', 2)).to.deep.equal(['2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z']);
      expect(runs('30 * * * *', 'Europe/London', '2026-03-29T00:00:00Z', 3, 'shift')).to.deep.equal([
        '2026-03-29T00:30:00Z',
        '2026-03-29T01:00:00Z',
        '2026-03-29T01:30:00Z',
      ]);
    });

    it('America/New_York, 2026-03-08: 02:00 EST jumps to 03:00 EDT', () => {
      expect(runs('30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 2, 'shift')).to.deep.equal(['2026-03-08T07:00:00Z', '2026-03-09T06:30:00Z']);
      expect(runs('30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 2, 'skip')).to.deep.equal(['2026-03-09T06:30:00Z', '2026-03-10T06:30:00Z']);
      // Several skipped times give one run at the jump under shift.
      expect(runs('0,20,40 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 2, 'shift')).to.deep.equal(['2026-03-08T07:00:00Z', '2026-03-09T06:00:00Z']);
    });

    it('Australia/Lord_Howe, 2026-10-04: 02:00 (+10:30) jumps by 30 minutes to 02:30 (+11)', () => {
      expect(runs('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T00:00:00Z', 2, 'shift')).to.deep.equal(['2026-10-03T15:30:00Z', '2026-10-04T15:15:00Z']);
      expect(runs('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T00:00:00Z', 1, 'skip')).to.deep.equal(['2026-10-04T15:15:00Z']);
      expect(runs('15 * * * *', 'Australia/Lord_Howe', '2026-10-03T14:00:00Z', 3, 'shift')).to.deep.equal([
        '2026-10-03T14:45:00Z',
        '2026-10-03T15:30:00Z',
        '2026-10-03T16:15:00Z',
      ]);
      expect(runs('15 * * * *', 'Australia/Lord_Howe', '2026-10-03T14:00:00Z', 2, 'skip')).to.deep.equal(['2026-10-03T14:45:00Z', '2026-10-03T16:15:00Z']);
    });

    it('Pacific/Apia, 2011-12-30: a whole day skipped (-10 to +14)', () => {
      // 2011-12-29 23:59:59 local was followed by 2011-12-31 00:00 local, at 2011-12-30T10:00Z.
      expect(runs('0 12 * * *', 'Pacific/Apia', '2011-12-29T12:00:00Z', 3, 'shift')).to.deep.equal([
        '2011-12-29T22:00:00Z',
        '2011-12-30T10:00:00Z',
        '2011-12-30T22:00:00Z',
      ]);
      expect(runs('0 12 * * *', 'Pacific/Apia', '2011-12-29T12:00:00Z', 2, 'skip')).to.deep.equal(['2011-12-29T22:00:00Z', '2011-12-30T22:00:00Z']);
      // Midnight at the jump is a real run; the skipped midnight of the 30th joins it under shift.
      for (const gap of ['shift', 'skip'] as const) {
        expect(runs('0 0 * * *', 'Pacific/Apia', '2011-12-29T12:00:00Z', 2, gap), gap).to.deep.equal(['2011-12-30T10:00:00Z', '2011-12-31T10:00:00Z']);
      }
    });
  });

  describe('overlaps: first, last or both', () => {
    it('Europe/London, 2026-10-25: 02:00 BST goes back to 01:00 GMT', () => {
      const from = '2026-10-24T12:00:00Z';
      expect(runs('30 1 * * *', 'Europe/London', from, 2)).to.deep.equal(['2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']);
      expect(runs('30 1 * * *', 'Europe/London', from, 2, 'classic', 'first')).to.deep.equal(['2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']);
      expect(runs('30 1 * * *', 'Europe/London', from, 2, 'classic', 'last')).to.deep.equal(['2026-10-25T01:30:00Z', '2026-10-26T01:30:00Z']);
      expect(runs('30 1 * * *', 'Europe/London', from, 3, 'classic', 'both')).to.deep.equal(['2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z', '2026-10-26T01:30:00Z']);
      const hourly = '2026-10-24T23:00:00Z';
      expect(runs('30 * * * *', 'Europe/London', hourly, 4)).to.deep.equal(['2026-10-24T23:30:00Z', '2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z', '2026-10-25T02:30:00Z']);
      expect(runs('30 * * * *', 'Europe/London', hourly, 3, 'classic', 'first')).to.deep.equal(['2026-10-24T23:30:00Z', '2026-10-25T00:30:00Z', '2026-10-25T02:30:00Z']);
      expect(runs('30 * * * *', 'Europe/London', hourly, 3, 'classic', 'last')).to.deep.equal(['2026-10-24T23:30:00Z', '2026-10-25T01:30:00Z', '2026-10-25T02:30:00Z']);
    });

    it('America/New_York, 2026-11-01: 02:00 EDT goes back to 01:00 EST', () => {
      const from = '2026-10-31T12:00:00Z';
      expect(runs('30 1 * * *', 'America/New_York', from, 2, 'skip', 'first')).to.deep.equal(['2026-11-01T05:30:00Z', '2026-11-02T06:30:00Z']);
      expect(runs('30 1 * * *', 'America/New_York', from, 2, 'skip', 'last')).to.deep.equal(['2026-11-01T06:30:00Z', '2026-11-02T06:30:00Z']);
      expect(runs('30 1 * * *', 'America/New_York', from, 3, 'skip', 'both')).to.deep.equal(['2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z', '2026-11-02T06:30:00Z']);
    });

    it('Australia/Lord_Howe, 2026-04-05: 02:00 (+11) goes back 30 minutes to 01:30 (+10:30)', () => {
      const from = '2026-04-04T00:00:00Z';
      expect(runs('45 1 * * *', 'Australia/Lord_Howe', from, 1, 'classic', 'first')).to.deep.equal(['2026-04-04T14:45:00Z']);
      expect(runs('45 1 * * *', 'Australia/Lord_Howe', from, 1, 'classic', 'last')).to.deep.equal(['2026-04-04T15:15:00Z']);
      expect(runs('45 1 * * *', 'Australia/Lord_Howe', from, 2, 'classic', 'both')).to.deep.equal(['2026-04-04T14:45:00Z', '2026-04-04T15:15:00Z']);
      // 01:15 is before the repeated half hour: once, whatever the rule.
      for (const overlap of ['first', 'last', 'both'] as const) {
        expect(runs('15 1 * * *', 'Australia/Lord_Howe', from, 1, 'classic', overlap), overlap).to.deep.equal(['2026-04-04T14:15:00Z']);
      }
    });
  });

  it('changes nothing in zones without changes, or on other nights', () => {
    for (const gap of ['classic', 'shift', 'skip'] as const) {
      for (const overlap of ['classic', 'first', 'last', 'both'] as const) {
        expect(runs('*/20 9 * * *', 'Asia/Tokyo', '2026-03-28T00:00:00Z', 3, gap, overlap)).to.deep.equal(['2026-03-28T00:20:00Z', '2026-03-28T00:40:00Z', '2026-03-29T00:00:00Z']);
        expect(runs('0 12 * * *', 'Europe/London', '2026-06-01T00:00:00Z', 2, gap, overlap)).to.deep.equal(['2026-06-01T11:00:00Z', '2026-06-02T11:00:00Z']);
      }
    }
  });

  it('refuses a rule for schedules that are not crontabs, and unknown rules, naming the setting', () => {
    const attempt = (expression: string, dst: { gap?: string; overlap?: string }) => () => parseSchedule({ expression, timezone: 'Europe/London', filter: null, dst });
    expect(attempt('1 day 01:30', { gap: 'skip' })).to.throw(ScheduleError).with.property('field', 'dstGap');
    expect(attempt('15 minutes', { overlap: 'both' })).to.throw(ScheduleError).with.property('field', 'dstOverlap');
    expect(attempt('30 1 * * *', { gap: 'later' })).to.throw(ScheduleError, /'later' is not a gap rule/).with.property('field', 'dstGap');
    expect(attempt('30 1 * * *', { overlap: 'twice' })).to.throw(ScheduleError).with.property('field', 'dstOverlap');
    expect(() => parseSchedule({ expression: '15 minutes', timezone: 'UTC', dst: { gap: 'classic', overlap: 'classic' } })).not.to.throw();
  });

  it('marks the runs a change moved or repeated', () => {
    const marks = (expression: string, timezone: string, from: string, count: number, gap: Gap, overlap: Overlap) => {
      const schedule = parseSchedule({ expression, timezone, filter: null, dst: { gap, overlap } });
      return dstMarks(schedule, nextRuns(schedule, Date.parse(from), count));
    };
    expect(marks('30 1 * * *', 'Europe/London', '2026-03-28T12:00:00Z', 2, 'shift', 'classic')).to.deep.equal([{ kind: 'moved' }, null]);
    expect(marks('30 1 * * *', 'Europe/London', '2026-10-24T12:00:00Z', 3, 'classic', 'both')).to.deep.equal([
      { kind: 'repeated', pass: 1 },
      { kind: 'repeated', pass: 2 },
      null,
    ]);
    expect(marks('30 1 * * *', 'Europe/London', '2026-10-24T12:00:00Z', 1, 'classic', 'last')).to.deep.equal([{ kind: 'repeated', pass: 2 }]);
    expect(marks('0 12 * * *', 'Pacific/Apia', '2011-12-29T12:00:00Z', 3, 'shift', 'classic')).to.deep.equal([null, { kind: 'moved' }, null]);
    // A run that is itself the jump's wall time, with nothing skipped before it, is not moved.
    expect(marks('0 2 * * *', 'Europe/London', '2026-03-28T12:00:00Z', 1, 'shift', 'classic')).to.deep.equal([null]);
    expect(marks('0 12 * * *', 'UTC', '2026-03-28T12:00:00Z', 2, 'shift', 'both')).to.deep.equal([null, null]);
  });

  it('walks any rule as the classic walks do when given the classic rules (around every change of 2026, six zones)', () => {
    const zones = ['Europe/London', 'America/New_York', 'Australia/Lord_Howe', 'Europe/Berlin', 'America/Santiago', 'Asia/Tehran'];
    const crons = ['30 1 * * *', '*/7 * * * *', '0,30 0-3 * * *', '15 2 * * 0', '*/20 1-2 * * *', '0 */3 * * *'];
    let changes = 0;
    for (const name of zones) {
      const zone = getZone(name)!;
      for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t = zone.spanEnd(t)) {
        if (zone.offsetAt(t) === zone.offsetAt(t - 1)) continue;
        changes++;
        for (const text of crons) {
          const cron = new Crontab(text);
          const rule = cron.followsRealTime ? ({ gap: 'skip', overlap: 'both' } as const) : ({ gap: 'shift', overlap: 'first' } as const);
          for (let from = t - 4 * 3_600_000, n = 0; n < 12; n++) {
            const classic = nextCronRun(cron, zone, from, 3 * 86_400_000);
            expect(nextByRule(cron, zone, from, 3 * 86_400_000, rule), `${name} ${text} from ${new Date(from).toISOString()}`).to.equal(classic);
            from = classic!;
          }
        }
      }
    }
    // Two changes a year in each zone but Tehran, which has kept one offset since 2022.
    expect(changes).to.equal(10);
  });
});
