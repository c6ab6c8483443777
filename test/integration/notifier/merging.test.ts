import { expect } from 'chai';
import { T0, createJob, execute, settle, startHarness, startReceiver } from './harness.ts';
import { waitFor } from '../../support/waitFor.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;

/** Merging an account's notifications, through the notifier (real SQLite store, in-process bus, HTTP receiver; fake clock). */
describe('notifier: a quiet account is told at once, what follows is merged', function () {
  this.timeout(20_000);
  let h: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  afterEach(async () => {
    await h?.destroy();
    await receiver?.close();
  });
  const pending = (n: number) => waitFor(() => (h.notifier.view.pendingByAccount().get(1)?.size ?? 0) === n, `${n} notifications pending`);
  const jobsIn = (i: number) => JSON.parse(receiver.received[i]!.body).notifications.map((n: { id: number }) => n.id);
  /** Moves the clock to `at` and lets the notifier act; then waits a moment for what it sends. */
  const until = async (at: number) => {
    await h.advance(at - h.clock.now());
    await settle(200);
  };

  it('the first failure goes out after the 2 s gather, later ones within the window wait for it to close, and a quiet spell starts afresh', async () => {
    h = await startHarness({ windowMs: 60_000 });
    receiver = await startReceiver();
    await h.notifier.channels.add(1, { type: 'webhook', name: 'ops', address: { url: receiver.url } });
    for (const id of [1, 2, 3, 4, 5]) await createJob(h.store, id);
    await settle(100);

    // Jobs 1 and 2 fail in the same moment: one message, 2 s later, not 60 s.
    await execute(h.bus, 1, true);
    await execute(h.bus, 2, true);
    await pending(2);
    await until(T0 + 1_999);
    expect(receiver.received).to.have.length(0);
    await until(T0 + 2_000);
    await waitFor(() => receiver.received.length === 1, 'the first message');
    expect(jobsIn(0)).to.deep.equal([1, 2]);

    // Within the window after it: merged, sent when that window closes (60 s after the first).
    await until(T0 + 12_000);
    await execute(h.bus, 3, true);
    await pending(1);
    await until(T0 + 40_000);
    await execute(h.bus, 4, true);
    await pending(2);
    await until(T0 + 61_999);
    expect(receiver.received).to.have.length(1);
    await until(T0 + 62_000);
    await waitFor(() => receiver.received.length === 2, 'the merged message');
    expect(jobsIn(1)).to.deep.equal([3, 4]);

    // Quiet for longer than a window: the next failure goes out at once again.
    await until(T0 + 200_000);
    await execute(h.bus, 5, true);
    await pending(1);
    await until(T0 + 202_000);
    await waitFor(() => receiver.received.length === 3, 'the third message');
    expect(jobsIn(2)).to.deep.equal([5]);
    await until(T0 + 400_000);
    expect(receiver.received).to.have.length(3);
  });
});
