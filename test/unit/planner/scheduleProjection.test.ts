import { expect } from 'chai';
import { nextRuns, parseSchedule } from '../../../shared/schedule/index.ts';
import type { JobEvent } from '../../../shared/job/index.ts';
import type { Watermark } from '../../../services/planner/catchUp.ts';
import { jitterMs, occurrenceAfter, upcomingRuns } from '../../../services/planner/occurrences.ts';
import { nextTick, ScheduleProjection } from '../../../services/planner/scheduleProjection.ts';
import {
  HOUR,
  MINUTE,
  SECOND,
  T0,
  failureCounted,
  jobAutoDisabled,
  jobCreated,
  jobDeleted,
  jobDisabled,
  jobEdited,
  jobEnabled,
  jobPaused,
  jobStopped,
  runRequested,
} from './jobEvents.ts';

/** A projection fed `events` (stream id, event) at positions 1, 2, 3... */
function project(events: [number, JobEvent][], watermark: Watermark | null = null) {
  const projection = new ScheduleProjection(watermark);
  events.forEach(([id, e], i) => projection.apply(id, e, BigInt(i + 1)));
  return projection;
}

const next = (p: ScheduleProjection, id: number, now: number, limit = 3) => p.nextRuns(1, id, now, limit);

describe('planner: schedule projection', () => {
  describe('which jobs are scheduled', () => {
    it('an active crontab job: the next occurrences strictly after now', () => {
      const p = project([[1, jobCreated(1, T0, { expression: '*/5 * * * *' })]]);
      expect(next(p, 1, T0)).to.deep.equal([T0 + 5 * MINUTE, T0 + 10 * MINUTE, T0 + 15 * MINUTE]);
      expect(next(p, 1, T0 + 5 * MINUTE)).to.deep.equal([T0 + 10 * MINUTE, T0 + 15 * MINUTE, T0 + 20 * MINUTE]);
    });

    for (const [name, event] of [
      ['disabled (1)', jobDisabled(T0 + 1)],
      ['auto-disabled (4)', jobAutoDisabled(T0 + 1)],
      ['stopped (6)', jobStopped(T0 + 1)],
      ['paused without end', jobPaused(T0 + 1, null)],
    ] as const) {
      it(`${name}: no scheduled runs`, () => {
        const p = project([[1, jobCreated(1, T0, { expression: '* * * * *' })], [1, event]]);
        expect(next(p, 1, T0 + 2)).to.deep.equal([]);
        expect(nextTick(p.get(1)!)).to.equal(null);
      });
    }

    it('paused with an end: occurrences before pausedUntil are skipped, then it resumes by itself', () => {
      const until = T0 + 30 * MINUTE;
      const p = project([[1, jobCreated(1, T0, { expression: '*/10 * * * *' })], [1, jobPaused(T0 + MINUTE, until)]]);
      expect(next(p, 1, T0 + MINUTE)).to.deep.equal([until, until + 10 * MINUTE, until + 20 * MINUTE]);
      expect(nextTick(p.get(1)!)).to.equal(until);
      // Once the pause is over, nothing special: the same occurrences as an active job.
      expect(next(p, 1, until + 5 * MINUTE, 1)).to.deep.equal([until + 10 * MINUTE]);
    });

    it('re-enabled: the schedule resumes from the enable time, not from where it stopped', () => {
      const p = project([
        [1, jobCreated(1, T0, { expression: '0 * * * *' })],
        [1, jobDisabled(T0 + 10 * MINUTE)],
        [1, jobEnabled(T0 + 5 * HOUR + MINUTE)],
      ]);
      expect(nextTick(p.get(1)!)).to.equal(T0 + 6 * HOUR);
    });

    it('manual: nothing scheduled, but queued cron_runs are listed', () => {
      const p = project([[1, jobCreated(1, T0, { expression: 'manual' })]]);
      expect(next(p, 1, T0)).to.deep.equal([]);
      p.apply(1, runRequested(T0, '1:x', T0 + 90 * SECOND), 9n);
      expect(next(p, 1, T0)).to.deep.equal([T0 + 90 * SECOND]);
    });

    it('queued cron_runs merge with the schedule; a disable drops them', () => {
      const p = project([
        [1, jobCreated(1, T0, { expression: '*/10 * * * *' })],
        [1, runRequested(T0, '1:a', T0 + 15 * MINUTE)],
        [1, runRequested(T0, '1:b', T0 + 5 * MINUTE)],
      ]);
      expect(next(p, 1, T0, 4)).to.deep.equal([T0 + 5 * MINUTE, T0 + 10 * MINUTE, T0 + 15 * MINUTE, T0 + 20 * MINUTE]);
      p.apply(1, jobDisabled(T0 + 1), 10n);
      expect(next(p, 1, T0, 4)).to.deep.equal([]);
      expect(p.get(1)!.queued).to.equal(null);
    });

    it('deleted: forgotten, and cron_next says not found; another account never sees it either', () => {
      const p = project([[1, jobCreated(1, T0)], [2, jobCreated(2, T0, {}, 7)], [1, jobDeleted(T0 + 1)]]);
      expect(p.get(1)).to.equal(undefined);
      expect(() => next(p, 1, T0)).to.throw('cron job 1 not found');
      expect(() => p.nextRuns(1, 2, T0, 1)).to.throw('cron job 2 not found');
      expect(p.nextRuns(7, 2, T0, 1)).to.have.length(1);
    });

    it('failure counting and a name edit do not re-plan; a URL edit re-plans on the same chain (runs out ahead carry the old URL)', () => {
      const p = project([[1, jobCreated(1, T0, { expression: '* * * * *' })]]);
      expect(p.apply(1, failureCounted(T0 + 1, 1), 5n).kind).to.equal('none');
      expect(p.apply(1, jobEdited(T0 + 2, { name: 'renamed' }), 6n).kind).to.equal('none');
      const anchor = p.get(1)!.anchor;
      expect(p.apply(1, jobEdited(T0 + 2, { url: 'http://127.0.0.1/new' }), 6n).kind).to.equal('replan');
      expect(p.get(1)!.job.settings.url).to.equal('http://127.0.0.1/new');
      expect(p.get(1)!.anchor).to.equal(anchor);
      expect(p.apply(1, jobEdited(T0 + 3, { expression: '*/2 * * * *' }), 7n).kind).to.equal('replan');
    });
  });

  describe('intervals', () => {
    it('the first run is the expression applied to the creation time, then each to the previous run', () => {
      const created = T0 + 7 * MINUTE + 13 * SECOND;
      const p = project([[1, jobCreated(1, created, { expression: '15 minutes' })]]);
      expect(next(p, 1, created)).to.deep.equal([created + 15 * MINUTE, created + 30 * MINUTE, created + 45 * MINUTE]);
      // Much later the chain is still anchored on the creation time.
      const later = created + 1000 * HOUR + 1;
      expect(next(p, 1, later, 1)).to.deep.equal([created + 1000 * HOUR + 15 * MINUTE]);
    });

    it('after a schedule edit the chain starts over from the edit time', () => {
      const edit = T0 + 3 * HOUR + 2 * MINUTE + 1 * SECOND;
      const p = project([[1, jobCreated(1, T0, { expression: '15 minutes' })], [1, jobEdited(edit, { expression: '1 hour' })]]);
      expect(next(p, 1, edit, 2)).to.deep.equal([edit + HOUR, edit + 2 * HOUR]);
    });

    it('a pause does not move the chain: occurrences inside the pause are skipped, the chain goes on', () => {
      const p = project([[1, jobCreated(1, T0, { expression: '10 minutes' })], [1, jobPaused(T0 + MINUTE, T0 + 25 * MINUTE)]]);
      expect(next(p, 1, T0 + MINUTE, 2)).to.deep.equal([T0 + 30 * MINUTE, T0 + 40 * MINUTE]);
    });

    it('the arithmetic jump along an elapsed chain lands on the points stepping would (with a filter too)', () => {
      const created = T0 + 17 * SECOND;
      const p = project([[1, jobCreated(1, created, { expression: '7 minutes', filter: 'hour >= 9 and hour < 17' })]]);
      const schedule = parseSchedule({ expression: '7 minutes', timezone: 'UTC', filter: 'hour >= 9 and hour < 17' });
      const stepped = nextRuns(schedule, created, 400);
      const t = stepped[250]! - 1;
      expect(occurrenceAfter(p.get(1)!, t)).to.equal(stepped[250]);
      expect(next(p, 1, stepped[100]!, 5)).to.deep.equal(stepped.slice(101, 106));
    });

    it('a calendar interval keeps the wall time across DST in its zone', () => {
      const created = Date.UTC(2030, 2, 8, 8, 0); // 09:00 in Berlin, before the March change
      const p = project([[1, jobCreated(1, created, { expression: '1 day', timezone: 'Europe/Berlin' })]]);
      const runs = next(p, 1, Date.UTC(2030, 2, 30, 12), 2);
      expect(runs).to.deep.equal([Date.UTC(2030, 2, 31, 7), Date.UTC(2030, 3, 1, 7)]); // 09:00 CEST
    });
  });

  describe('one-time', () => {
    it('runs once: after its occurrence is committed nothing follows', () => {
      const at = T0 + 2 * HOUR;
      const p = project([[1, jobCreated(1, T0, { expression: `@${at / 1000}` })]]);
      expect(next(p, 1, T0)).to.deep.equal([at]);
      const plan = p.get(1)!;
      expect(nextTick(plan)).to.equal(at);
      plan.cursor = at;
      expect(nextTick(plan)).to.equal(null);
      expect(next(p, 1, at)).to.deep.equal([]);
    });
  });

  describe('delay', () => {
    it('draws the same 0..delay*60 whole seconds for the same (job, occurrence), and spreads them', () => {
      const seen = new Set<number>();
      for (let k = 0; k < 500; k++) {
        const j = jitterMs(42, T0 + k * MINUTE, 3);
        expect(j).to.equal(jitterMs(42, T0 + k * MINUTE, 3));
        expect(j % 1000).to.equal(0);
        expect(j).to.be.within(0, 180_000);
        seen.add(j);
      }
      expect(seen.size).to.be.greaterThan(100);
      expect(jitterMs(42, T0, 0)).to.equal(0);
      expect(jitterMs(43, T0, 3)).to.not.equal(jitterMs(42, T0, 3)); // different jobs spread (holds for this pair)
    });

    it('cron_next lists publish times (occurrence + delay) in order, the same in two projections', () => {
      const events: [number, JobEvent][] = [[5, jobCreated(5, T0, { expression: '* * * * *', delay: 10 })]];
      const a = project(events);
      const b = project(events);
      const now = T0 + HOUR;
      const runs = next(a, 5, now, 20);
      expect(runs).to.deep.equal(next(b, 5, now, 20));
      expect(runs).to.have.length(20);
      expect([...runs].sort((x, y) => x - y)).to.deep.equal(runs);
      for (const r of runs) expect(r).to.be.greaterThan(now);
      // Brute force: every occurrence within reach, pushed back by its own draw.
      const all: number[] = [];
      for (let o = now - 10 * MINUTE; o <= now + 60 * MINUTE; o += MINUTE) all.push(o + jitterMs(5, o, 10));
      expect(runs).to.deep.equal(all.filter((p) => p > now).sort((x, y) => x - y).slice(0, 20));
    });
  });

  describe('compiling', () => {
    it('compiles once per schedule: jobs with the same schedule share it, R crontabs do not', () => {
      const p = project([
        [1, jobCreated(1, T0, { expression: '*/5 * * * *' })],
        [2, jobCreated(2, T0, { expression: '*/5 * * * *' })],
        [3, jobCreated(3, T0, { expression: 'R * * * *' })],
        [4, jobCreated(4, T0, { expression: 'R * * * *' })],
      ]);
      expect(p.get(1)!.schedule).to.equal(p.get(2)!.schedule);
      expect(p.get(3)!.schedule).to.not.equal(p.get(4)!.schedule);
      expect(p.get(3)!.schedule!.jobId).to.equal(3);
      expect(upcomingRuns(p.get(3)!, T0, 2)).to.deep.equal(nextRuns(p.get(3)!.schedule!, T0, 2));
    });

    it('forgets a cron_run published before the recorded watermark', () => {
      const w = { at: T0 + HOUR, position: 10n };
      const p = project([[1, jobCreated(1, T0)], [1, runRequested(T0, '1:old', T0 + MINUTE)], [1, runRequested(T0, '1:new', T0 + 2 * HOUR)]], w);
      expect(p.get(1)!.queued!.map((q) => q.runId)).to.deep.equal(['1:new']);
    });
  });
});
