import { expect } from 'chai';
import { OLD_BATCH_CATEGORY, OLD_DELIVERY_CATEGORY, batchStream, deliveryStream } from '../../../shared/notify/index.ts';
import { waitFor } from '../../support/waitFor.ts';
import { T0, settle, startHarness, startReceiver } from './harness.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;

/** The notifier started on what an earlier one left: a claim by a replica that died, the old stream names, triggers from before an outage. */
describe('notifier service (real SQLite store, bus, HTTP receivers and SMTP peer; fake clock)', function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.destroy());

  /** A replica killed between its claim and its send left these streams: the decision and the claim. */
  const claimedThenDied = (names: { batch: string; delivery: string }) => async () => {
    const receiver = await startReceiver();
    const trigger = {
      key: 'r1:failed', kind: 'failed', reasons: ['the run failed'], at: T0, fail: 1,
      job: { id: 1, accountId: 1, name: 'job 1', url: 'https://example.com', group: null, groupName: '', failureThreshold: 20, channels: null },
      execution: { runId: 'r1', time: T0 / 1000, failed: true, httpStatus: 503, error: 'HTTP status 503', output: '', downloaded: 0, executionTime: 0.1 },
    };
    h = await startHarness({
      windowMs: 0,
      leaseMs: 30_000,
      // What a replica left behind when it was killed between its claim and its send.
      seed: async (store) => {
        await store.appendToStream('channel-7', [{ type: 'ChannelAdded', data: { id: 7, accountId: 1, type: 'webhook', name: 'ops', address: { url: receiver.url }, secret: 's', at: T0 } }]);
        await store.appendToStream(names.batch, [{ type: 'NotificationDecided', data: { id: 'n1', accountId: 1, at: T0, triggers: [trigger], routes: [{ channelId: 7, keys: ['r1:failed'] }] } }]);
        await store.appendToStream(names.delivery, [{ type: 'DeliveryClaimed', data: { channelId: 7, attempt: 1, until: T0 + 30_000, at: T0 } }]);
      },
    });
    await h.advance(29_999);
    await settle(300);
    expect(receiver.received).to.have.length(0);
    await h.advance(1);
    await waitFor(() => receiver.received.length === 1, 'one request at the receiver');
    await h.advance(120_000);
    await settle(300);
    expect(receiver.received).to.have.length(1);
    const events = await h.store.readStream(names.delivery);
    expect(events.map((e) => [e.type, e.data.attempt])).to.deep.equal([['DeliveryClaimed', 1], ['DeliveryClaimed', 2], ['Delivered', 2]]);
    await receiver.close();
  };

  it('a delivery claimed by a replica that died is sent once, by the next attempt, when its lease runs out', claimedThenDied({ batch: batchStream(1), delivery: deliveryStream('n1') }));

  it('a store written with the old stream names (notifications-, notification-): the claimed delivery is finished there, sent once', claimedThenDied({
    batch: `${OLD_BATCH_CATEGORY}-1`,
    delivery: `${OLD_DELIVERY_CATEGORY}-n1`,
  }));

  it('after an outage longer than a day, triggers older than a day are dropped, not sent late; newer ones are sent', async () => {
    const receiver = await startReceiver();
    const trigger = (key: string, at: number) => ({
      key, kind: 'failed', reasons: ['the run failed'], at, fail: 1,
      job: { id: 1, accountId: 1, name: `job ${key}`, url: 'https://example.com', group: null, groupName: '', failureThreshold: 20, channels: null },
      execution: { runId: key, time: at / 1000, failed: true, httpStatus: 503, error: '', output: '', downloaded: 0, executionTime: 0.1 },
    });
    h = await startHarness({
      windowMs: 0,
      seed: async (store) => {
        await store.appendToStream('channel-7', [{ type: 'ChannelAdded', data: { id: 7, accountId: 1, type: 'webhook', name: 'ops', address: { url: receiver.url }, secret: 's', at: T0 } }]);
        await store.appendToStream('notifyjob-1', [
          { type: 'NotificationTriggered', data: { trigger: trigger('old', T0 - 25 * 3_600_000) } },
          { type: 'NotificationTriggered', data: { trigger: trigger('new', T0 - 3_600_000) } },
        ]);
      },
    });
    await waitFor(async () => {
      await h.advance(0);
      return receiver.received.length === 1;
    }, 'one request at the receiver');
    await h.advance(60_000);
    await settle(200);
    expect(receiver.received).to.have.length(1);
    expect(JSON.parse(receiver.received[0]!.body).notifications.map((n: { name: string }) => n.name)).to.deep.equal(['job new']);
    await receiver.close();
  });
});
