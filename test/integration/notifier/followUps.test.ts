import { expect } from 'chai';
import { T0, createJob, execute, settle, startHarness, startReceiver } from './harness.ts';
import { waitFor } from '../../support/waitFor.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;

/** Reminders and escalation channels through the notifier (real SQLite store, in-process bus, HTTP receivers; fake clock). */
describe('notifier: reminders while a job stays failing, and escalation channels', function () {
  this.timeout(30_000);
  let h: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  afterEach(async () => {
    await h?.destroy();
    await receiver?.close();
  });

  /** What each channel's path received: "<jobId>:<event>" per notification of each message. */
  const heard = (path: string) =>
    receiver.received.filter((r) => r.url === path).flatMap((r) => JSON.parse(r.body).notifications.map((n: { id: number; event: string }) => `${n.id}:${n.event}`));

  /** A run of `jobId` scheduled (and seen) at `minute` past T0; waits until the notifier has looked at it. */
  async function runAt(jobId: number, minute: number, failed: boolean) {
    await h.advance(T0 + minute * 60_000 - h.clock.now());
    const seen = receiver.received.length;
    await execute(h.bus, jobId, failed, { time: BigInt(T0 / 1000 + minute * 60) });
    await settle(150);
    await h.advance(0);
    await settle(150);
    return receiver.received.length - seen;
  }

  it('an escalation channel hears of a failure once it has lasted its time, then of each notification and of its end; the others of all', async () => {
    h = await startHarness({ windowMs: 0 });
    receiver = await startReceiver();
    await h.notifier.channels.add(1, { type: 'webhook', name: 'team', address: { url: `${receiver.url}/team` } });
    const oncall = await h.notifier.channels.add(1, { type: 'webhook', name: 'on call', address: { url: `${receiver.url}/oncall` }, escalateAfter: 30 });
    expect(oncall.escalateAfter).to.equal(30);
    await createJob(h.store, 1, { name: 'billing' });
    await createJob(h.store, 2, { name: 'quiet', notifyEvery: 100 });
    await settle(100);
    for (const minute of [0, 10, 20, 30, 40]) await runAt(1, minute, true);
    await runAt(1, 50, false);
    await waitFor(() => heard('/team').length === 6 && heard('/oncall').length === 3, 'every message');
    expect(heard('/team')).to.deep.equal(['1:failed', '1:failed', '1:failed', '1:failed', '1:failed', '1:okay']);
    expect(heard('/oncall')).to.deep.equal(['1:failed', '1:failed', '1:okay']);
    const escalation = JSON.parse(receiver.received.find((r) => r.url === '/oncall')!.body);
    expect(escalation.reasons).to.deep.equal(['4 consecutive failures', 'failing for 30 minutes, since 12:00 UTC']);

    // A job that tells nobody until its 100th failure: the escalation channel alone hears of it, and of its end.
    for (const minute of [60, 70, 80, 90, 100]) await runAt(2, minute, true);
    await runAt(2, 110, false);
    await waitFor(() => heard('/oncall').length === 5, 'the escalation of job 2 and its end');
    expect(heard('/oncall').slice(3)).to.deep.equal(['2:failed', '2:okay']);
    expect(heard('/team')).to.have.length(6);
  });

  it('with notifyReminder a failure is told once, then at the first failed run each N hours after', async () => {
    h = await startHarness({ windowMs: 0 });
    receiver = await startReceiver();
    await h.notifier.channels.add(1, { type: 'webhook', name: 'team', address: { url: `${receiver.url}/team` } });
    await createJob(h.store, 1, { name: 'nightly', notifyReminder: 1 });
    await settle(100);
    const told: number[] = [];
    for (let minute = 0; minute <= 150; minute += 15) if (await runAt(1, minute, true)) told.push(minute);
    if (await runAt(1, 160, false)) told.push(160);
    expect(told).to.deep.equal([0, 60, 120, 160]);
    const reminder = JSON.parse(receiver.received[1]!.body);
    expect(reminder.reasons).to.deep.equal(['still failing (a reminder every 1 hour): 5 consecutive failures since 12:00 UTC']);
    expect(heard('/team')).to.deep.equal(['1:failed', '1:failed', '1:failed', '1:okay']);
  });
});
