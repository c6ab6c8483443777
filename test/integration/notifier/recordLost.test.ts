import { expect } from 'chai';
import type { EventStore } from '../../../shared/eventStore/eventStore.ts';
import { batchStream, deliveryStream } from '../../../shared/notify/index.ts';
import { T0, settle, startHarness, startReceiver } from './harness.ts';
import { waitFor } from '../../support/waitFor.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;

/**
 * A fake fault around the real SQLite store: the one append of the delivery's outcome fails as a
 * PostgreSQL connection does when the server stops (`pg_ctl -m fast`), either before the commit
 * or after it (the answer lost). SQLite in one process cannot lose a connection by itself.
 */
function losingOutcomeOnce(when: 'before commit' | 'after commit') {
  let inner: EventStore | undefined;
  let armed = true;
  const store = new Proxy({} as EventStore, {
    get(_t, key) {
      const real = inner!;
      if (key === 'appendToStream')
        return async (...args: Parameters<EventStore['appendToStream']>) => {
          const outcome = armed && args[1].some((e) => e.type === 'Delivered' || e.type === 'DeliveryAttempted');
          if (outcome && when === 'before commit') {
            armed = false;
            throw new Error('Connection terminated unexpectedly');
          }
          const result = await real.appendToStream(...args);
          if (outcome) {
            armed = false;
            throw new Error('Connection terminated unexpectedly');
          }
          return result;
        };
      const v = Reflect.get(real, key) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(real) : v;
    },
  });
  return { store, use: (s: EventStore) => (inner = s) };
}

describe('notifier: the store fails the append of a sent delivery\'s outcome (real SQLite behind a fake fault, fake clock)', function () {
  this.timeout(20_000);
  let h: Harness;
  afterEach(async () => h?.destroy());

  for (const when of ['before commit', 'after commit'] as const) {
    it(`outcome lost ${when}: the message is sent once, not again when the claim's lease runs out`, async () => {
      const receiver = await startReceiver();
      const trigger = {
        key: 'r1:failed', kind: 'failed', reasons: ['the run failed'], at: T0, fail: 1,
        job: { id: 1, accountId: 1, name: 'job 1', url: 'https://example.com', group: null, groupName: '', failureThreshold: 20, channels: null },
        execution: { runId: 'r1', time: T0 / 1000, failed: true, httpStatus: 503, error: 'HTTP status 503', output: '', downloaded: 0, executionTime: 0.1 },
      };
      const fault = losingOutcomeOnce(when);
      h = await startHarness({
        windowMs: 0,
        leaseMs: 30_000,
        store: fault.store,
        seed: async (store) => {
          fault.use(store);
          await store.appendToStream('channel-7', [{ type: 'ChannelAdded', data: { id: 7, accountId: 1, type: 'webhook', name: 'ops', address: { url: receiver.url }, secret: 's', at: T0 } }]);
          await store.appendToStream(batchStream(1), [{ type: 'NotificationDecided', data: { id: 'n1', accountId: 1, at: T0, triggers: [trigger], routes: [{ channelId: 7, keys: ['r1:failed'] }] } }]);
        },
      });
      await h.advance(0);
      await waitFor(() => receiver.received.length === 1, 'one request at the receiver');
      // Past the claim's lease, several times over: nothing may claim and send it again.
      for (let i = 0; i < 4; i++) {
        await h.advance(60_000);
        await settle(300);
      }
      expect(receiver.received).to.have.length(1);
      const events = await h.store.readStream(deliveryStream('n1'));
      expect(events.map((e) => [e.type, e.data.attempt])).to.deep.equal([['DeliveryClaimed', 1], ['Delivered', 1]]);
      await receiver.close();
    });
  }
});
