import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../../../shared/clock.ts';
import { fails, ok, apiClient } from '../../support/api.ts';
import { startTestSystem } from '../../support/embedded.ts';
import { streamEvents } from '../../support/targets.ts';
import { startWebhookReceiver } from '../../support/webhookReceiver.ts';

/**
 * channel_secret_rotate through the public API (embedded mode, a fake clock that starts now, since
 * the receiver's library judges timestamps by its own clock), a receiver that verifies every
 * request with the npm standardwebhooks library.
 */
describe('channel_secret_rotate: webhooks verifiable with standardwebhooks before, during and after a rotation (embedded mode)', function () {
  this.timeout(60_000);
  const clock = new FakeClock(Date.now());
  const secrets = { standard: {} as Record<string, string>, tock: {} as Record<string, string> };
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  before(async () => {
    receiver = await startWebhookReceiver(secrets);
    system = await startTestSystem({ clock, env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
  });
  after(async () => {
    await system?.destroy();
    await receiver?.close();
  });

  const test = async (id: number) => {
    expect(await ok(system.api.call('channel_test', { id }))).to.deep.equal({ delivered: true, error: '' });
    return receiver.received.at(-1)!;
  };

  it('before, with the old and the new secret during the overlap, and after it with the new one only', async () => {
    const hook = await ok(system.api.call('channel_add', { type: 'webhook', url: `${receiver.url}/hook` }));
    expect(hook.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    secrets.standard.first = secrets.tock.first = hook.secret;
    expect(await test(hook.id)).to.deep.include({ standard: ['first'], tock: ['first'] });

    const rotated = await ok(system.api.call('channel_secret_rotate', { id: hook.id, overlap: 120 }));
    expect(rotated).to.include({ id: hook.id, type: 'webhook', enabled: true, previousValidUntil: Math.floor(clock.now() / 1000) + 120 });
    expect(rotated.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/).and.to.not.equal(hook.secret);
    secrets.standard.second = secrets.tock.second = rotated.secret;
    const listed = JSON.stringify(await ok(system.api.call('channel_list')));
    expect(listed).to.not.include(rotated.secret);
    expect(listed).to.not.include(hook.secret);

    await clock.advance(119_000);
    const during = await test(hook.id);
    expect(during).to.deep.include({ standard: ['first', 'second'], tock: ['first', 'second'] });

    await clock.advance(1_000);
    expect(await test(hook.id)).to.deep.include({ standard: ['second'], tock: ['second'] });

    // Without overlap (a secret that leaked): the replaced one stops at once.
    const third = await ok(system.api.call('channel_secret_rotate', { id: hook.id, overlap: 0 }));
    expect(third.previousValidUntil).to.equal(null);
    secrets.standard.third = secrets.tock.third = third.secret;
    expect(await test(hook.id)).to.deep.include({ standard: ['third'], tock: ['third'] });

    // Sealed at rest like every channel secret: in no event, in no database file.
    const rotations = streamEvents(system.dataDir, `channel-${hook.id}`).filter((e) => e.type === 'ChannelSecretRotated');
    expect(rotations).to.have.length(2);
    for (const e of rotations) expect(e.data.secret).to.match(/^enc:v1:/);
    for (const file of ['events.db', 'events.db-wal']) {
      const bytes = (() => {
        try {
          return readFileSync(join(system.dataDir, file)).toString('latin1');
        } catch {
          return '';
        }
      })();
      for (const secret of [hook.secret, rotated.secret, third.secret]) expect(bytes.includes(secret), `${file}`).to.equal(false);
    }
  });

  it('the default overlap is a day', async () => {
    const hook = await ok(system.api.call('channel_add', { type: 'webhook', url: `${receiver.url}/day` }));
    const rotated = await ok(system.api.call('channel_secret_rotate', { id: hook.id }, { as: 'form' }));
    expect(rotated.previousValidUntil).to.equal(Math.floor(clock.now() / 1000) + 86_400);
  });

  it('refuses a missing or bad id or overlap, a channel without a secret and another account\'s channel, and changes nothing', async () => {
    const hook = await ok(system.api.call('channel_add', { type: 'webhook', url: `${receiver.url}/refused` }));
    const email = await ok(system.api.call('channel_add', { type: 'email', email: 'ops@example.com' }));
    const { account, token } = await system.adminClient.createAccount({ name: 'bob', timezone: 'UTC', jobLimit: 0 });
    const bob = apiClient(system.baseUrl, token);
    expect(account).to.not.equal(undefined);
    const before = streamEvents(system.dataDir, `channel-${hook.id}`).length;
    expect(await fails(system.api.call('channel_secret_rotate', {}), 4)).to.match(/^id: is required/);
    expect(await fails(system.api.call('channel_secret_rotate', { id: 'abc' }), 3)).to.match(/^id: /);
    expect(await fails(system.api.call('channel_secret_rotate', { id: hook.id, overlap: -1 }), 3)).to.equal('overlap: must be a whole number of seconds from 0 to 604800, got -1');
    expect(await fails(system.api.call('channel_secret_rotate', { id: hook.id, overlap: 604_801 }), 3)).to.match(/^overlap: must be a whole number of seconds from 0 to 604800/);
    expect(await fails(system.api.call('channel_secret_rotate', { id: hook.id, overlap: 'a day' }), 3)).to.match(/^overlap: /);
    expect(await fails(system.api.call('channel_secret_rotate', { id: email.id }), 3)).to.equal(`id: channel ${email.id} is an email channel; only a webhook channel has a signing secret`);
    const foreign = await fails(bob.call('channel_secret_rotate', { id: hook.id }), 5);
    const missing = await fails(bob.call('channel_secret_rotate', { id: 99_999_999 }), 5);
    expect(foreign.replace(String(hook.id), 'N')).to.equal(missing.replace('99999999', 'N'));
    expect(streamEvents(system.dataDir, `channel-${hook.id}`)).to.have.length(before);
    expect(streamEvents(system.dataDir, `channel-${email.id}`)).to.have.length(1);
  });
});
