import { expect } from 'chai';
import { createStaleRuns } from '../../../services/executor/staleRuns.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { decodeCancel, RUN_CANCEL_SUBJECTS } from '../../../shared/topology.ts';
import { jobCreated, jobDeleted, jobEdited, jobPaused, SECOND, T0 } from '../../unit/planner/jobEvents.ts';
import { world, type Received } from './harness.ts';

/**
 * A job change while runs are on the bus, judged as an executor judges them (its own staleness
 * test, fed the planner's cancel notices): every occurrence before the change keeps exactly one
 * run, every one after it runs once from the new state, or not at all once paused.
 */
describe('planner cancel notices: a job change cancels what it replaces and nothing else', () => {
  let w: Awaited<ReturnType<typeof world>>;
  const stale = createStaleRuns();
  beforeEach(async () => {
    w = await world();
    await w.bus.subscribe(RUN_CANCEL_SUBJECTS, (_s, data) => stale.cancel(decodeCancel(data)!));
  });
  afterEach(async () => w.close());

  /** The runs an executor calls (judged now), by occurrence (s after T0): [url, ...]. */
  const called = (runs: Received[], by = new Map<number, string[]>()) => {
    for (const { run } of runs) {
      const check = { jobId: Number(run.target!.jobId), plannedAt: Number(run.plannedAt), planSince: Number(run.planSince), occurrenceAt: Number(run.occurrenceAt), manual: run.manual, retry: false };
      if (stale.isStale(check)) continue;
      const s = (Number(run.occurrenceAt) - T0) / SECOND;
      by.set(s, [...(by.get(s) ?? []), run.target!.url]);
    }
    return by;
  };

  it('keeps the run of an occurrence due before the change, still held by an executor', async () => {
    await w.append(1, jobCreated(1, T0, { expression: '* * * * * *', url: 'http://one.test/' }));
    await w.startPlanner({ leadMs: 1500 });
    // At 10.6 s the runs of 10, 11 and 12 s are out; an executor still holds the one of 10 s.
    await w.advance(10 * SECOND + 600);
    const before = w.take();
    expect(before.map((r) => (Number(r.run.occurrenceAt) - T0) / SECOND).slice(-3)).to.deep.equal([10, 11, 12]);
    const runs = called(before.slice(0, -3));
    await w.append(1, jobEdited(w.clock.now(), { url: 'http://two.test/' }));
    await w.advance(4 * SECOND);
    called([...before.slice(-3), ...w.take()], runs);
    for (let s = 1; s <= 10; s++) expect(runs.get(s), `occurrence ${s}`).to.deep.equal(['http://one.test/']);
    for (let s = 11; s <= 15; s++) expect(runs.get(s), `occurrence ${s}`).to.deep.equal(['http://two.test/']);
  });

  it('sends no notice for a job just created (none of its runs can be out), and one for each change after', async () => {
    const notices: number[] = [];
    await w.bus.subscribe(RUN_CANCEL_SUBJECTS, (_s, data) => void notices.push(decodeCancel(data)!.jobId));
    await w.startPlanner({ leadMs: 1500 });
    await w.append(7, jobCreated(7, T0, { expression: '* * * * * *', url: 'http://one.test/' }));
    await w.append(8, jobCreated(8, T0, { expression: '0 * * * * *', url: 'http://two.test/' }));
    await w.advance(3 * SECOND);
    expect(notices).to.deep.equal([]);
    await w.append(7, jobEdited(w.clock.now(), { url: 'http://three.test/' }));
    await w.advance(SECOND);
    expect(notices).to.deep.equal([7]);
  });

  it('drops the runs out ahead of a deleted job, keeps the one due before the delete', async () => {
    await w.append(3, jobCreated(3, T0, { expression: '* * * * * *', url: 'http://one.test/' }));
    await w.startPlanner({ leadMs: 1500 });
    await w.advance(10 * SECOND + 600);
    const out = w.take();
    const runs = called(out.slice(0, -3));
    await w.append(3, jobDeleted(w.clock.now()));
    await w.advance(4 * SECOND);
    called([...out.slice(-3), ...w.take()], runs);
    expect(runs.get(10)).to.deep.equal(['http://one.test/']);
    expect([...runs.keys()].filter((s) => s > 10)).to.deep.equal([]);
  });

  it('drops what a replica with an out-of-date view publishes after the change', async () => {
    // The second replica reads a store that has not seen the pause yet (as a SIGSTOPped planner
    // whose subscription lags): it goes on publishing from the job as it was.
    const lagging = openSqliteEventStore(':memory:');
    const created = jobCreated(2, T0, { expression: '* * * * * *', url: 'http://one.test/' });
    await lagging.appendToStream('cronjob-2', [{ type: created.type, data: created.data }]);
    await w.append(2, created);
    await w.startPlanner({ leadMs: 1500 });
    await w.startPlanner({ leadMs: 1500, store: lagging });
    await w.advance(10 * SECOND + 600);
    // Called on time: up to 9 s; the runs of 10 s (due, held by a slow executor), 11 and 12 s wait.
    const out = w.take();
    const runs = called(out.filter((r) => Number(r.run.occurrenceAt) < T0 + 10 * SECOND));
    await w.append(2, jobPaused(w.clock.now(), null));
    await w.advance(5 * SECOND);
    const after = w.take();
    expect(after.some((r) => Number(r.run.occurrenceAt) > T0 + 13 * SECOND), 'the lagging replica published after the pause').to.equal(true);
    called([...out.filter((r) => Number(r.run.occurrenceAt) >= T0 + 10 * SECOND), ...after], runs);
    for (let s = 1; s <= 10; s++) expect(runs.get(s), `occurrence ${s}`).to.deep.equal(['http://one.test/']);
    expect([...runs.keys()].filter((s) => s > 10)).to.deep.equal([]);
    await w.close();
    await lagging.close();
    w = await world(); // closed already: afterEach closes a fresh one
  });
});
