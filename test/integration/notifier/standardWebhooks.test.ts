import { expect } from 'chai';
import { createJob, execute, settle, startHarness } from './harness.ts';
import { startWebhookReceiver } from '../../support/webhookReceiver.ts';
import { waitFor } from '../../support/waitFor.ts';
import { batchStream } from '../../../shared/notify/index.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;

/**
 * Notification webhooks through the notifier (real SQLite store, in-process bus, a real HTTP
 * receiver checking with the npm standardwebhooks library). The fake clock starts now, since the
 * library judges each timestamp against the receiver's own clock.
 */
describe('notifier: Standard Webhooks headers and signing-secret rotation', function () {
  this.timeout(20_000);
  let h: Harness;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  afterEach(async () => {
    await h?.destroy();
    await receiver?.close();
  });

  /** One failure of job 1, delivered: the request that carried it. */
  async function failAndDeliver() {
    const seen = receiver.received.length;
    await execute(h.bus, 1, true);
    return waitFor(async () => {
      await h.advance(0);
      return receiver.received.length > seen && receiver.received.at(-1)!;
    }, 'a notification at the receiver');
  }

  it('every attempt of one message carries the same webhook-id, its own timestamp, and verifies with the library', async () => {
    const secrets = { standard: {} as Record<string, string>, tock: {} as Record<string, string> };
    receiver = await startWebhookReceiver(secrets, (n) => (n === 1 ? 500 : undefined));
    h = await startHarness({ windowMs: 0, startAt: Date.now() });
    const channel = await h.notifier.channels.add(1, { type: 'webhook', name: 'ops', address: { url: `${receiver.url}/hook` } });
    Object.assign(secrets, { standard: { added: channel.secret }, tock: { added: channel.secret } });
    await createJob(h.store, 1);
    await settle(100);
    await failAndDeliver();
    await settle(200);
    await h.advance(2_000);
    await waitFor(() => receiver.received.length === 2, 'the retry at the receiver');
    const [first, retry] = receiver.received;
    const decided = await h.store.readStream(batchStream(1));
    expect(first!.headers['webhook-id']).to.equal(`msg_${decided[0]!.data.id}_${channel.id}`);
    expect(retry!.headers['webhook-id']).to.equal(first!.headers['webhook-id']);
    expect(Number(retry!.headers['webhook-timestamp']) - Number(first!.headers['webhook-timestamp'])).to.be.at.least(1);
    expect(retry!.body).to.equal(first!.body);
    for (const r of [first!, retry!]) {
      expect(r.standard).to.deep.equal(['added']);
      expect(r.tock).to.deep.equal(['added']);
      expect(r.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
    }
  });

  it('rotation: before it the first secret verifies; during the overlap both; after it only the new one', async () => {
    const secrets = { standard: {} as Record<string, string>, tock: {} as Record<string, string> };
    receiver = await startWebhookReceiver(secrets);
    h = await startHarness({ windowMs: 0, startAt: Date.now() });
    const channel = await h.notifier.channels.add(1, { type: 'webhook', name: 'ops', address: { url: `${receiver.url}/hook` } });
    Object.assign(secrets, { standard: { first: channel.secret }, tock: { first: channel.secret } });
    await createJob(h.store, 1);
    await settle(100);

    expect(await failAndDeliver()).to.deep.include({ standard: ['first'], tock: ['first'] });

    const rotated = await h.notifier.channels.rotateSecret(1, channel.id, 120);
    expect(rotated.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/).and.to.not.equal(channel.secret);
    expect(rotated.previousSecret!.validUntil).to.equal(h.clock.now() + 120_000);
    secrets.standard.second = rotated.secret;
    secrets.tock.second = rotated.secret;
    await h.advance(60_000);
    const during = await failAndDeliver();
    expect(during.standard).to.deep.equal(['first', 'second']);
    expect(during.tock).to.deep.equal(['first', 'second']);
    expect(String(during.headers['webhook-signature']).split(' ')).to.have.length(2);

    await h.advance(60_000);
    const after = await failAndDeliver();
    expect(after.standard).to.deep.equal(['second']);
    expect(after.tock).to.deep.equal(['second']);
    expect(String(after.headers['webhook-signature']).split(' ')).to.have.length(1);
  });

  it('a channel whose secret was shown before the whsec_ form: the same key bytes sign, and its rotation overlaps like any other', async () => {
    const legacy = Buffer.alloc(32, 0xfb).toString('base64url');
    const legacyStandard = `whsec_${Buffer.from(legacy, 'base64url').toString('base64')}`;
    const secrets = { standard: { legacy: legacyStandard } as Record<string, string>, tock: { legacy } as Record<string, string> };
    receiver = await startWebhookReceiver(secrets);
    const at = Date.now();
    h = await startHarness({
      windowMs: 0,
      startAt: at,
      seed: (store) => store.appendToStream('channel-7', [{ type: 'ChannelAdded', data: { id: 7, accountId: 1, type: 'webhook', name: 'old', address: { url: `${receiver.url}/old` }, secret: legacy, at } }]).then(() => undefined),
    });
    expect(await h.notifier.channels.test(1, 7)).to.include({ ok: true });
    expect(receiver.received.at(-1)).to.deep.include({ standard: ['legacy'], tock: ['legacy'] });

    const rotated = await h.notifier.channels.rotateSecret(1, 7);
    secrets.standard.new = rotated.secret;
    secrets.tock.new = rotated.secret;
    expect(await h.notifier.channels.test(1, 7)).to.include({ ok: true });
    expect(receiver.received.at(-1)).to.deep.include({ standard: ['legacy', 'new'], tock: ['legacy', 'new'] });
    expect(receiver.received.at(-1)!.headers['webhook-id']).to.match(/^msg_test-[0-9a-f-]{36}_7$/);
  });
});
