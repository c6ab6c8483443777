import { expect } from 'chai';
import { decodeCancel, RUN_CANCEL_SUBJECTS } from '../../../shared/topology.ts';
import { jobCreated, jobEdited, jobPaused, MINUTE, SECOND, T0 } from '../../unit/planner/jobEvents.ts';
import { world } from './harness.ts';
import { nth } from '../../support/nth.ts';

describe('planner lead: runs go out ahead of their instant, a job change cancels them', () => {
  let w: Awaited<ReturnType<typeof world>>;
  beforeEach(async () => (w = await world()));
  afterEach(async () => w.close());

  /** Job `id` every minute (http://one.test/) with its first run out ahead of its instant (5 s lead); the cancel notices heard. */
  async function firstRunOutAhead(id: number) {
    const notices: ReturnType<typeof decodeCancel>[] = [];
    await w.bus.subscribe(RUN_CANCEL_SUBJECTS, (_s, data) => notices.push(decodeCancel(data)));
    await w.append(id, jobCreated(id, T0, { expression: '* * * * *', url: 'http://one.test/' }));
    await w.startPlanner({ leadMs: 5 * SECOND });
    await w.advance(MINUTE - 5 * SECOND);
    return notices;
  }

  it('publishes leadMs early, carrying the real due instant and when it was planned', async () => {
    await w.append(1, jobCreated(1, T0, { expression: '* * * * *' }));
    await w.startPlanner({ leadMs: 2 * SECOND });
    await w.advance(MINUTE - 2 * SECOND - 1);
    expect(w.take()).to.deep.equal([]);
    await w.advance(1);
    const r = nth(w.take());
    expect(r.run.runId).to.equal(`1:${T0 + MINUTE}`);
    expect(r.run.scheduledAt).to.equal(BigInt(T0 + MINUTE));
    expect(r.run.plannedAt).to.equal(BigInt(T0 + MINUTE - 2 * SECOND));
  });

  it('sends a cancel notice when a job with runs out ahead changes, and re-publishes what is still due', async () => {
    const notices = await firstRunOutAhead(2);
    expect(w.take().map((r) => r.run.target!.url)).to.deep.equal(['http://one.test/']);

    // Edited 3 s before the run: the run already out is stale; the edited one goes out anew.
    await w.advance(2 * SECOND);
    await w.append(2, jobEdited(w.clock.now(), { url: 'http://two.test/' }));
    await w.settle();
    // Occurrences after the edit, planned before it, are cancelled: the one out ahead goes out anew.
    const edited = T0 + MINUTE - 3 * SECOND;
    expect(notices).to.deep.equal([{ jobId: 2, before: edited, since: edited, from: edited }]);
    const again = w.take();
    expect(again.map((r) => [r.run.runId, r.run.target!.url])).to.deep.equal([[`2:${T0 + MINUTE}`, 'http://two.test/']]);
    expect(Number(again[0]!.run.plannedAt)).to.be.at.least(edited);
    expect(Number(again[0]!.run.planSince)).to.equal(edited);

    // Paused before the next run goes out: nothing is ahead, nothing is published again.
    await w.advance(50 * SECOND);
    const paused = w.clock.now();
    await w.append(2, jobPaused(paused, null));
    await w.advance(MINUTE);
    expect(w.take()).to.deep.equal([]);
    expect(notices).to.deep.equal([
      { jobId: 2, before: edited, since: edited, from: edited },
      { jobId: 2, before: paused, since: paused, from: paused },
    ]);
  });

  it('a change the planner applies only after the instant of a run out ahead (it lagged) still cancels that run and publishes it anew', async () => {
    const notices = await firstRunOutAhead(3);
    expect(w.take().map((r) => [r.run.runId, r.run.target!.url])).to.deep.equal([[`3:${T0 + MINUTE}`, 'http://one.test/']]);
    // Edited 3 s before the run, acknowledged then; the planner hears of it 1 s after the run's instant.
    const edited = T0 + MINUTE - 3 * SECOND;
    await w.advance(6 * SECOND);
    await w.append(3, jobEdited(edited, { url: 'http://two.test/' }));
    await w.settle();
    expect(notices.map((n) => [n!.since, n!.from])).to.deep.equal([[edited, edited]]);
    expect(w.take().map((r) => [r.run.runId, r.run.target!.url, Number(r.run.planSince)])).to.deep.equal([[`3:${T0 + MINUTE}`, 'http://two.test/', edited]]);
  });
});
