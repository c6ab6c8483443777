import { expect } from 'chai';
import { SkipReason } from '../../../shared/gen/tock/v1/events_pb.ts';
import { MINUTE, SECOND, T0, jobCreated } from '../../unit/planner/jobEvents.ts';
import { tick, world } from './harness.ts';

const accountEvent = async (w: Awaited<ReturnType<typeof world>>, type: 'AccountDisabled' | 'AccountEnabled', at: number) => {
  await w.store.appendToStream('account-7', [{ type, data: { at } }]);
  for (let i = 0; i < 20; i++) await tick();
};

/**
 * The skip record of a disabled account's jobs as the planner puts it on the bus: once, when the
 * account is enabled, while running or, for an enable it had not published yet, at its next start.
 */
describe("planner: a disabled account's runs not made (integration: SQLite store, in-process bus, fake clock)", function () {
  let w: Awaited<ReturnType<typeof world>>;
  beforeEach(async () => (w = await world()));
  afterEach(async () => w.close());

  it('enabled while running: one due run marked skip for the minutes missed, then the schedule goes on', async () => {
    await w.startPlanner();
    await w.append(1, jobCreated(1, T0, { expression: '* * * * *' }, 7));
    await w.advance(MINUTE + SECOND);
    expect(w.take().map((r) => r.run.skip)).to.deep.equal([SkipReason.UNSPECIFIED]);
    await accountEvent(w, 'AccountDisabled', T0 + MINUTE + SECOND);
    await w.advance(5 * MINUTE);
    await accountEvent(w, 'AccountEnabled', T0 + 6 * MINUTE + SECOND);
    await w.settle();
    const [record, ...rest] = w.take();
    expect(rest).to.deep.equal([]);
    expect(record!.subject).to.equal('tock.runs.due.1');
    expect(record!.run).to.include({ runId: `1:${T0 + 6 * MINUTE}:account-disabled`, skip: SkipReason.ACCOUNT_DISABLED, missed: 5, scheduledAt: BigInt(T0 + 6 * MINUTE) });
    await w.advance(MINUTE);
    expect(w.take().map((r) => [r.run.runId, r.run.skip])).to.deep.equal([[`1:${T0 + 7 * MINUTE}`, SkipReason.UNSPECIFIED]]);
  });

  it('enabled while the planner was down: published at its start, once; a later start does not repeat it', async () => {
    const first = await w.startPlanner({ watermarkEveryMs: 1000 });
    await w.append(1, jobCreated(1, T0, { expression: '* * * * *' }, 7));
    await accountEvent(w, 'AccountDisabled', T0 + SECOND);
    await w.advance(2 * SECOND);
    await w.stopPlanner(first);
    await accountEvent(w, 'AccountEnabled', T0 + 3 * MINUTE + SECOND);
    await w.clock.advance(3 * MINUTE);
    const second = await w.startPlanner({ watermarkEveryMs: 1000 });
    await w.settle();
    expect(w.take().map((r) => [r.run.runId, r.run.missed, r.run.skip])).to.deep.equal([[`1:${T0 + 3 * MINUTE}:account-disabled`, 3, SkipReason.ACCOUNT_DISABLED]]);
    await w.advance(2 * SECOND);
    await w.stopPlanner(second);
    await w.startPlanner();
    await w.settle();
    expect(w.take().filter((r) => r.run.skip !== SkipReason.UNSPECIFIED), 'the enable is behind the watermark now').to.deep.equal([]);
  });
});
