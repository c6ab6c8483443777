import { expect } from 'chai';
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { FakeClock } from '../../shared/clock.ts';
import { ensureTopology, MINUTE } from '../../shared/topology.ts';
import { executionSubject } from '../../shared/subjects/executor.ts';
import { dueRunSubject } from '../../shared/subjects/planner.ts';

const data = new Uint8Array([1]);

describe('bus topology: duplicate windows', () => {
  const publishTwice = async (options: Parameters<typeof ensureTopology>[1], gapMs: number) => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const bus = createInProcessBus({ clock });
    await ensureTopology(bus, options);
    await bus.publish(dueRunSubject(1), data, { msgId: 'run-1' });
    await bus.publish(executionSubject(1, 1, 'succeeded'), data, { msgId: 'run-1' });
    await clock.advance(gapMs);
    const again = await Promise.all([
      bus.publish(dueRunSubject(1), data, { msgId: 'run-1' }),
      bus.publish(executionSubject(1, 1, 'succeeded'), data, { msgId: 'run-1' }),
    ]);
    await bus.close();
    return again.map((r) => r.duplicate);
  };

  it('drops a repeated run id for 15 minutes by default (longer than any planner failover)', async () => {
    expect(await publishTwice({}, 14 * MINUTE)).to.deep.equal([true, true]);
    expect(await publishTwice({}, 15 * MINUTE + 1)).to.deep.equal([false, false]);
  });

  it('keeps ids only as long as asked (embedded mode: 2 minutes, so memory stays bounded)', async () => {
    expect(await publishTwice({ duplicateWindowMs: 2 * MINUTE }, 2 * MINUTE - 1)).to.deep.equal([true, true]);
    expect(await publishTwice({ duplicateWindowMs: 2 * MINUTE }, 2 * MINUTE + 1)).to.deep.equal([false, false]);
  });
});
