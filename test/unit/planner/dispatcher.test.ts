import { expect } from 'chai';
import type { Bus, PublishResult } from '../../../shared/bus/bus.ts';
import { FakeClock } from '../../../shared/clock.ts';
import { createLogger } from '../../../shared/log.ts';
import type { PlannedRun } from '../../../services/planner/catchUp.ts';
import { Dispatcher } from '../../../services/planner/dispatcher.ts';
import { T0 } from './jobEvents.ts';

const order = (jobId: number, at: number): PlannedRun => ({
  jobId,
  runId: `${jobId}:${at}`,
  occurrenceAt: at,
  scheduledAt: at,
  manual: false,
  payload: null,
  missed: 0,
  lateByMs: 0,
});

/** A bus that fails the first `failures` publishes, counts the in-flight ones, and settles only when told. */
function fakeBus(failures: number) {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const settle: (() => void)[] = [];
  const bus = {
    publish(subject: string, _data: Uint8Array, options?: { msgId?: string }): Promise<PublishResult> {
      calls.push(options!.msgId!);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      return new Promise((resolve, reject) =>
        settle.push(() => {
          inFlight--;
          if (failures-- > 0) reject(new Error('nats: timeout'));
          else resolve({ stream: 'RUNS', seq: calls.length, duplicate: false });
        }),
      );
    },
  } as unknown as Bus;
  const flush = async () => {
    while (settle.length) settle.shift()!();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  };
  return { bus, calls, flush, maxInFlight: () => maxInFlight };
}

describe('planner: dispatcher', () => {
  const log = createLogger('test', {}, 'silent');

  it('keeps at most `concurrency` publishes in flight and holds the watermark at the earliest unacked run', async () => {
    const clock = new FakeClock(T0);
    const f = fakeBus(0);
    const d = new Dispatcher(f.bus, clock, log, 4);
    for (let i = 0; i < 10; i++) d.enqueue({ order: order(i, T0 + i), subject: `s.${i}`, encode: () => new Uint8Array() });
    expect(f.calls).to.have.length(4);
    expect(d.lowestPending()).to.equal(T0);
    while (f.calls.length < 10 || d.lowestPending() !== Infinity) await f.flush();
    expect(f.maxInFlight()).to.equal(4);
    expect(d.stats().published).to.equal(10);
    await d.idle();
  });

  it('retries a failed publish with backoff on the clock; the watermark waits for it', async () => {
    const clock = new FakeClock(T0);
    const f = fakeBus(2);
    const d = new Dispatcher(f.bus, clock, log);
    d.enqueue({ order: order(1, T0), subject: 's.1', encode: () => new Uint8Array() });
    await f.flush(); // fails
    expect(d.lowestPending()).to.equal(T0);
    await clock.advance(500);
    await f.flush(); // fails again
    await clock.advance(1000);
    await f.flush(); // lands
    expect(f.calls).to.deep.equal([`1:${T0}`, `1:${T0}`, `1:${T0}`]);
    expect(d.lowestPending()).to.equal(Infinity);
    expect(d.stats()).to.include({ published: 1, errors: 2 });
  });
});
