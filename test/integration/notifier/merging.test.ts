import { expect } from 'chai';
import { T0, createJob, decodeQp, execute, settle, startHarness, startReceiver, startSmtp, subjectOf } from './harness.ts';
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

  it('a host outage of 50 jobs gives one message per channel, naming the host, the count, since when and the error', async () => {
    const smtp = await startSmtp();
    h = await startHarness({ windowMs: 60_000, smtp: { host: '127.0.0.1', port: smtp.port, tls: 'off', from: 'tock@example.com' } });
    receiver = await startReceiver();
    await h.notifier.channels.add(1, { type: 'webhook', name: 'ops', address: { url: receiver.url } });
    await h.notifier.channels.add(1, { type: 'email', name: 'me', address: { email: 'ops@example.com' } });
    for (let id = 1; id <= 50; id++) await createJob(h.store, id, { url: `https://api.example.com/jobs/${id}` });
    await createJob(h.store, 51, { url: 'https://other.example.com/' });
    await settle(100);
    const error = 'connect ECONNREFUSED 203.0.113.7:443';
    // The failures come in over 1.5 s (the notifier records them one by one): the message waits for the last.
    for (let id = 1; id <= 25; id++) await execute(h.bus, id, true, { httpStatus: 0, error });
    await pending(25);
    await until(T0 + 1_500);
    for (let id = 26; id <= 51; id++) await execute(h.bus, id, true, { httpStatus: 0, error });
    await pending(51);
    await until(T0 + 3_499);
    expect(receiver.received).to.have.length(0);
    await until(T0 + 3_500);
    await waitFor(() => receiver.received.length === 1 && smtp.mails.length === 1, 'one webhook call and one email');
    await until(T0 + 200_000);
    expect(receiver.received).to.have.length(1);
    expect(smtp.mails).to.have.length(1);
    const line = `api.example.com: 50 jobs failing since 12:00 UTC, ${error}`;
    const body = JSON.parse(receiver.received[0]!.body);
    expect(body.hosts).to.deep.equal([{ host: 'api.example.com', count: 50, jobs: Array.from({ length: 50 }, (_, i) => i + 1), since: T0 / 1000, error }]);
    expect(body.count).to.equal(51);
    expect(subjectOf(smtp.mails[0]!.raw)).to.equal('Tock: api.example.com: 50 jobs failing, 1 more cron job needs attention');
    expect(decodeQp(smtp.mails[0]!.raw)).to.include(`By host:\r\n  ${line}`);
    await smtp.close();
  });
});
