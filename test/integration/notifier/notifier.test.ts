import { fromBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { NotificationSchema, type Notification } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createJob, decodeQp, subjectOf, execute, jobEvent, settle, startHarness, startReceiver, startSmtp } from './harness.ts';
import { nth } from '../../support/nth.ts';
import { waitFor } from '../../support/waitFor.ts';
import { batchStream, deliveryStream } from '../../../shared/notify/index.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;

/** An independent check of X-Tock-Signature, as a receiver would write it from docs/api.md (Signatures). */
function verifySignature(header: string, body: string, secret: string, nowSeconds: number): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1 ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('notifier service (real SQLite store, bus, HTTP receivers and SMTP peer; fake clock)', function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.destroy());
  /** Waits until the rules have recorded this many triggers, not yet merged (the clock waits for them). */
  const pending = (n: number) => waitFor(() => (h.notifier.view.pendingByAccount().get(1)?.size ?? 0) === n, `${n} notifications pending for account 1`);

  it('webhook: one signed POST with FastCron\'s fields, once the short gather of a quiet account is over, and nothing before it', async () => {
    h = await startHarness();
    const receiver = await startReceiver();
    const channel = await h.notifier.channels.add(1, { type: 'webhook', name: 'ops', address: { url: `${receiver.url}/hook` } });
    await createJob(h.store, 1, { name: 'backup', url: 'https://alice:hunter2@example.com/backup', password: 'pw-secret', httpHeaders: 'X-Api-Key: key-secret' });
    await settle(100);
    const published: { subject: string; notification: Notification }[] = [];
    await h.bus.subscribe('tock.notifications.>', (subject, data) => published.push({ subject, notification: fromBinary(NotificationSchema, data) }));
    const runId = await execute(h.bus, 1, true);
    await pending(1);
    await h.advance(1_999);
    await settle(200);
    expect(receiver.received).to.have.length(0);
    await h.advance(1);
    const request = nth(await waitFor(() => receiver.received.length && receiver.received, 'a request at the receiver'));
    expect(request.method).to.equal('POST');
    expect(request.url).to.equal('/hook');
    expect(request.headers['content-type']).to.equal('application/json');
    expect(verifySignature(String(request.headers['x-tock-signature']), request.body, channel.secret, Math.floor(h.clock.now() / 1000))).to.equal(true);
    expect(verifySignature(String(request.headers['x-tock-signature']), request.body, 'wrong secret', Math.floor(h.clock.now() / 1000))).to.equal(false);
    const body = JSON.parse(request.body);
    expect(body).to.include({ id: 1, time: Math.floor(Date.UTC(2026, 10, 23, 12) / 1000), output: 'upstream down', downloaded: 13, httpStatus: 503, error: 'HTTP status 503', executionTime: 0.5, status: 1, message: 'fails', name: 'backup', group: 0 });
    expect(body.url).to.equal('https://***:***@example.com/backup');
    expect(body.count).to.equal(1);
    expect(body.notifications[0].id).to.equal(1);
    expect(request.body).to.not.match(/hunter2|alice|pw-secret|key-secret/);
    // Exactly once: nothing more arrives, and the delivery is on record.
    await h.advance(120_000);
    await settle(200);
    expect(receiver.received).to.have.length(1);
    const decided = await h.store.readStream(batchStream(1));
    expect(decided.map((e) => e.type)).to.deep.equal(['NotificationDecided']);
    expect(decided[0]!.data.triggers[0]!.execution.runId).to.equal(runId);
    const deliveries = await h.store.readStream(deliveryStream(decided[0]!.data.id));
    expect(deliveries.map((e) => e.type)).to.deep.equal(['DeliveryClaimed', 'Delivered']);
    // The notification is also on the bus, for third parties: no channel address or secret in it.
    expect(published.map((p) => p.subject)).to.deep.equal(['tock.notifications.1.failed']);
    const { notification } = nth(published);
    expect(notification.id).to.equal(decided[0]!.data.id);
    expect(notification.channelIds).to.deep.equal([BigInt(channel.id)]);
    expect(notification.triggers[0]).to.include({ jobId: 1n, jobName: 'backup', jobUrl: 'https://***:***@example.com/backup', kind: 'failed', runId, httpStatus: 503 });
    expect(JSON.stringify(notification, (_, v) => (typeof v === 'bigint' ? String(v) : v))).to.not.match(/hook|hunter2/);
    await receiver.close();
  });

  it('email: several jobs failing at once make one email per channel, with a subject and text + HTML bodies naming them', async () => {
    const smtp = await startSmtp();
    h = await startHarness({ smtp: { host: '127.0.0.1', port: smtp.port, tls: 'off', from: 'tock@example.com' } });
    await h.notifier.channels.add(1, { type: 'email', name: 'me', address: { email: 'ops@example.com' } });
    // Each on a host of its own: no host has two failing jobs (merging.test.ts has the host outage).
    for (const id of [1, 2, 3]) await createJob(h.store, id, { name: `feed ${id}`, url: `https://feed${id}.example.com/` });
    await settle(100);
    for (const id of [1, 2, 3]) await execute(h.bus, id, true);
    await pending(3);
    await h.advance(60_000);
    const mail = nth(await waitFor(() => smtp.mails.length && smtp.mails, 'a mail at the SMTP peer'));
    expect(mail.to).to.deep.equal(['ops@example.com']);
    expect(mail.from).to.equal('tock@example.com');
    expect(subjectOf(mail.raw)).to.equal('Tock: 3 cron jobs need attention (3 failed)');
    const raw = decodeQp(mail.raw);
    expect(raw).to.match(/Content-Type: text\/plain/);
    expect(raw).to.match(/Content-Type: text\/html/);
    for (const id of [1, 2, 3]) {
      expect(raw).to.include(`Cron job "feed ${id}" (#${id}) failed`);
      expect(raw).to.include(`<h3>Cron job &quot;feed ${id}&quot; (#${id}) failed</h3>`);
    }
    expect(raw).to.include('HTTP status: 503');
    await h.advance(120_000);
    await settle(300);
    expect(smtp.mails).to.have.length(1);
    await smtp.close();
  });

  it('a single job failing: the subject names the job and what happened', async () => {
    const smtp = await startSmtp();
    h = await startHarness({ smtp: { host: '127.0.0.1', port: smtp.port, tls: 'off', from: 'tock@example.com' }, windowMs: 0 });
    await h.notifier.channels.add(1, { type: 'email', name: 'me', address: { email: 'ops@example.com' } });
    await createJob(h.store, 4, { name: 'invoice run', failureThreshold: 1 });
    await settle(100);
    await execute(h.bus, 4, true);
    await waitFor(async () => {
      await h.advance(0);
      return smtp.mails.length;
    }, 'a mail at the SMTP peer');
    expect(subjectOf(smtp.mails[0]!.raw)).to.equal('Tock: "invoice run" (#4) was disabled after repeated failures');
    expect(decodeQp(smtp.mails[0]!.raw)).to.include('What: 1 consecutive failure reached the failure threshold of 1: the job is disabled');
    await smtp.close();
  });

  it('a receiver answering 500 then 200: one message, delivered by the retry after the backoff', async () => {
    h = await startHarness({ windowMs: 0 });
    const receiver = await startReceiver((n) => ({ status: n === 1 ? 500 : 200 }));
    const channel = await h.notifier.channels.add(1, { type: 'webhook', name: 'flaky', address: { url: receiver.url } });
    await createJob(h.store, 1);
    await settle(100);
    await execute(h.bus, 1, true);
    await waitFor(async () => {
      await h.advance(0);
      return receiver.received.length === 1;
    }, 'one request at the receiver');
    await settle(200);
    await h.advance(999);
    await settle(200);
    expect(receiver.received).to.have.length(1);
    await h.advance(1);
    await waitFor(() => receiver.received.length === 2, 'two requests at the receiver');
    expect(receiver.received[1]!.body).to.equal(receiver.received[0]!.body.replace(/"time":\d+/, (m) => m));
    await h.advance(60_000);
    await settle(200);
    expect(receiver.received).to.have.length(2);
    const current = await waitFor(() => h.notifier.view.channel(channel.id)?.failures === 0 && h.notifier.view.channel(channel.id), 'the channel\'s failures reset');
    expect(current).to.include({ enabled: true, failures: 0 });
    await receiver.close();
  });

  it('a receiver that always fails: retried with backoff honouring Retry-After, then the channel is disabled after 5 with its last error', async () => {
    h = await startHarness({ windowMs: 0 });
    const receiver = await startReceiver(() => ({ status: 503, headers: { 'retry-after': '30' } }));
    const channel = await h.notifier.channels.add(1, { type: 'slack', name: 'dead', address: { url: `${receiver.url}/services/T/B/x` } });
    await createJob(h.store, 1);
    await settle(100);
    await execute(h.bus, 1, true);
    await waitFor(async () => {
      await h.advance(0);
      return receiver.received.length === 1;
    }, 'one request at the receiver');
    for (let n = 2; n <= 5; n++) {
      await settle(150);
      await h.advance(29_000);
      await settle(150);
      expect(receiver.received).to.have.length(n - 1);
      await h.advance(1_000);
      await waitFor(() => receiver.received.length === n, `${n} requests at the receiver`);
    }
    const disabled = await waitFor(() => h.notifier.view.channel(channel.id)?.enabled === false && h.notifier.view.channel(channel.id), 'the channel disabled');
    expect(disabled).to.include({ failures: 5 });
    expect(disabled.lastError).to.match(/^HTTP 503/);
    expect(h.notifier.channels.list(1)[0]).to.include({ enabled: false });
    await h.advance(3_600_000);
    await settle(200);
    expect(receiver.received).to.have.length(5);
    await receiver.close();
  });

  it('a disabled account, a job its owner disabled, and notify=false send nothing; enabling counts afresh', async () => {
    h = await startHarness({ windowMs: 0 });
    const receiver = await startReceiver();
    await h.notifier.channels.add(1, { type: 'webhook', name: 'ops', address: { url: receiver.url } });
    await createJob(h.store, 1, { notify: false });
    await createJob(h.store, 2);
    await jobEvent(h.store, 2, 'JobDisabled');
    await createJob(h.store, 3, {}, 2);
    await h.store.appendToStream('account-2', [{ type: 'AccountDisabled', data: { at: 0 } }]);
    await settle(100);
    await execute(h.bus, 1, true);
    await execute(h.bus, 2, true);
    await execute(h.bus, 3, true, {}, 2);
    await h.advance(0);
    await settle(300);
    await h.advance(0);
    expect(receiver.received).to.have.length(0);
    await jobEvent(h.store, 2, 'JobEnabled', { at: 5 });
    await settle(100);
    await execute(h.bus, 2, true);
    await waitFor(async () => {
      await h.advance(0);
      return receiver.received.length === 1;
    }, 'one request at the receiver');
    expect(JSON.parse(receiver.received[0]!.body)).to.include({ id: 2, fail: 1 });
    await receiver.close();
  });

  it('every rule through the service: match, !match, slow, every 2nd failure, okay again, auto-disable', async () => {
    h = await startHarness({ windowMs: 0 });
    const receiver = await startReceiver();
    await h.notifier.channels.add(1, { type: 'webhook', name: 'ops', address: { url: receiver.url } });
    await createJob(h.store, 1, { notifyMatch: 'WARN', notifyTime: 2, notifyEvery: 2, failureThreshold: 4 });
    await createJob(h.store, 2, { notifyMatch: '!ALL OK' });
    await settle(100);
    const runs: [number, boolean, Record<string, unknown>][] = [
      [1, false, { output: 'done, WARN: disk 91%' }],
      [1, false, { executionTime: 2.5 }],
      [1, false, { executionTime: 2 }],
      [2, false, { output: 'ALL OK' }],
      [2, false, { output: 'partial' }],
      [1, true, {}],
      [1, true, {}],
      [1, false, {}],
      [1, true, {}],
      [1, true, {}],
      [1, true, {}],
      [1, true, {}],
    ];
    const events: string[] = [];
    for (const [job, failed, over] of runs) {
      const seen = receiver.received.length;
      await execute(h.bus, job, failed, over);
      await settle(150);
      await h.advance(0);
      await settle(150);
      if (receiver.received.length > seen) {
        const body = JSON.parse(receiver.received.at(-1)!.body);
        events.push(`${body.id}:${body.event}:${body.status}`);
      }
    }
    expect(events).to.deep.equal(['1:match:0', '1:slow:0', '2:match:0', '1:failed:1', '1:okay:0', '1:failed:1', '1:disabled:1']);
    await receiver.close();
  });
});
