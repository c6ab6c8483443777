import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { fails, ok, type ApiClient } from '../../support/api.ts';
import { embeddedTarget, storeMark } from '../../support/targets.ts';
import { startReceiver } from '../../integration/notifier/harness.ts';
import { nth } from '../../support/nth.ts';
import { waitFor } from '../../support/waitFor.ts';

/** The channel functions through the gateway (embedded mode: real gRPC to the notifier), and a failure notified end to end. */
describe('notification channels API (embedded mode)', function () {
  this.timeout(60_000);
  let target: Awaited<ReturnType<typeof embeddedTarget>>;
  let alice: ApiClient;
  let bob: ApiClient;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver(() => ({ status: receiverFailing ? 500 : 200 }));
    target = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_NOTIFY_WINDOW_MS: '0', TOCK_PUBLIC_URL: 'https://tock.example.com' });
    alice = await target.newAccount({ name: 'alice' });
    bob = await target.newAccount({ name: 'bob' });
  });
  after(async () => {
    await target.stop();
    await receiver.close();
  });
  let receiverFailing = false;

  it('channel_add answers the id and, for a webhook, the signing secret once; channel_list masks the address and never shows it', async () => {
    const added = await ok(alice.call('channel_add', { type: 'webhook', name: 'ops hook', url: `${receiver.url}/hook/secret-path` }));
    expect(added).to.include({ type: 'webhook', name: 'ops hook', enabled: true, failures: 0, lastError: '' });
    expect(added.id).to.be.a('number');
    expect(added.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(added.url).to.equal(`${new URL(receiver.url).protocol}//${new URL(receiver.url).host}/****`);
    const listed = await ok(alice.call('channel_list', {}, { method: 'GET' }));
    expect(listed).to.have.length(1);
    expect(listed[0]).to.not.have.property('secret');
    expect(JSON.stringify(listed)).to.not.include('secret-path');
    expect(JSON.stringify(listed)).to.not.include(added.secret);
    await ok(alice.call('channel_delete', { id: added.id }));
  });

  it('each type takes its own address; a bad or missing one is refused naming the parameter, and stores nothing', async () => {
    const before = storeMark(target.dataDir);
    expect(await fails(alice.call('channel_add', { name: 'x' }), 4)).to.match(/^type: is required/);
    expect(await fails(alice.call('channel_add', { type: 'pager', url: 'https://x.example' }), 3)).to.match(/^type: must be one of email, webhook, slack, discord, teams, telegram/);
    expect(await fails(alice.call('channel_add', { type: 'email' }), 4)).to.match(/^email: is required/);
    expect(await fails(alice.call('channel_add', { type: 'email', email: 'not an address' }), 3)).to.match(/^email: /);
    expect(await fails(alice.call('channel_add', { type: 'discord', url: 'javascript:alert(1)' }), 3)).to.match(/^url: /);
    expect(await fails(alice.call('channel_add', { type: 'telegram', botToken: '123:abcdefghijklmnopqrstuvwxyz' }), 4)).to.match(/^chatId: is required/);
    expect(await fails(alice.call('channel_edit', { id: 'abc' }), 3)).to.match(/^id: /);
    expect(storeMark(target.dataDir)).to.deep.equal(before);
    const email = await ok(alice.call('channel_add', { type: 'EMAIL', email: 'ops@example.com' }, { as: 'form' }));
    expect(email).to.include({ type: 'email', email: 'ops@example.com', name: `email ${email.id}` });
    expect(email).to.not.have.property('secret');
    const telegram = await ok(alice.call('channel_add', { type: 'telegram', bot_token: '123456:AAbbCCddEEffGGhhIIjjKKllMM', chat_id: '-100200300' }));
    expect(telegram).to.include({ botToken: '****llMM', chatId: '-100200300' });
    for (const c of [email, telegram]) await ok(alice.call('channel_delete', { id: c.id }));
  });

  it('escalateAfter makes an escalation channel; a bad value is refused naming the parameter, and changes nothing', async () => {
    const hook = await ok(alice.call('channel_add', { type: 'webhook', url: `${receiver.url}/escalation`, escalateAfter: 30 }));
    expect(hook).to.include({ escalateAfter: 30 });
    expect((await ok(alice.call('channel_list'))).find((c: { id: number }) => c.id === hook.id)).to.include({ escalateAfter: 30 });
    expect(await ok(alice.call('channel_edit', { id: hook.id, escalate_after: '0' }, { as: 'form' }))).to.include({ escalateAfter: 0 });
    const before = JSON.stringify(await ok(alice.call('channel_list')));
    expect(await fails(alice.call('channel_add', { type: 'webhook', url: `${receiver.url}/x`, escalateAfter: -1 }), 3)).to.equal('escalateAfter: must be a whole number of minutes from 0 to 10080, got -1');
    expect(await fails(alice.call('channel_edit', { id: hook.id, escalateAfter: 10_081 }), 3)).to.match(/^escalateAfter: must be a whole number of minutes from 0 to 10080/);
    expect(await fails(alice.call('channel_edit', { id: hook.id, escalateAfter: 'soon' }), 3)).to.match(/^escalateAfter: /);
    expect(JSON.stringify(await ok(alice.call('channel_list')))).to.equal(before);
    await ok(alice.call('channel_delete', { id: hook.id }));
  });

  it("another account's channel is code 5 for edit, delete and test, like a missing one, and is not listed", async () => {
    const own = await ok(alice.call('channel_add', { type: 'slack', url: `${receiver.url}/services/T/B/x` }));
    for (const fn of ['channel_edit', 'channel_delete', 'channel_test']) {
      const foreign = await fails(bob.call(fn, { id: own.id, name: 'mine now' }), 5);
      const missing = await fails(bob.call(fn, { id: 99_999_999, name: 'mine now' }), 5);
      expect(foreign.replace(String(own.id), 'N')).to.equal(missing.replace('99999999', 'N'));
    }
    expect(await ok(bob.call('channel_list'))).to.deep.equal([]);
    expect((await ok(alice.call('channel_list')))[0]).to.include({ id: own.id, name: `slack ${own.id}` });
    const edited = await ok(alice.call('channel_edit', { id: own.id, name: 'alerts', enabled: 'off' }));
    expect(edited).to.include({ name: 'alerts', enabled: false });
    await ok(alice.call('channel_delete', { id: own.id }));
    await fails(alice.call('channel_edit', { id: own.id, name: 'again' }), 5);
  });

  it('channel_test sends a signed test message now and answers whether it arrived', async () => {
    const hook = await ok(alice.call('channel_add', { type: 'webhook', url: `${receiver.url}/test-hook` }));
    const before = receiver.received.length;
    expect(await ok(alice.call('channel_test', { id: hook.id }))).to.deep.equal({ delivered: true, error: '' });
    const request = nth(receiver.received, before);
    expect(request.url).to.equal('/test-hook');
    const [t, v1] = String(request.headers['x-tock-signature']).split(',').map((p) => p.split('=')[1]);
    expect(v1).to.equal(createHmac('sha256', hook.secret).update(`${t}.${request.body}`).digest('hex'));
    expect(JSON.parse(request.body).name).to.equal('Tock test notification');
    receiverFailing = true;
    const failed = await ok(alice.call('channel_test', { id: hook.id }));
    receiverFailing = false;
    expect(failed.delivered).to.equal(false);
    expect(failed.error).to.match(/^HTTP 500/);
    await ok(alice.call('channel_delete', { id: hook.id }));
  });

  it('a job whose run fails is notified to the account\'s webhook, end to end (executor, bus, notifier)', async () => {
    const hook = await ok(bob.call('channel_add', { type: 'webhook', url: `${receiver.url}/bob-hook` }));
    receiverFailing = true;
    const job = await ok(bob.call('cron_add', { url: `${receiver.url}/job`, expression: 'manual', name: 'bob job', failureThreshold: 5 }));
    await ok(bob.call('cron_run', { id: job.id }));
    const request = await waitFor(() => receiver.received.find((r) => r.url === '/bob-hook'), 'bob\'s webhook call', 20_000);
    receiverFailing = false;
    const body = JSON.parse(request.body);
    expect(body).to.include({ id: job.id, status: 1, message: 'fails', httpStatus: 500, name: 'bob job', fail: 1 });
    expect(body.url).to.equal(`${receiver.url}/job`);
    await ok(bob.call('channel_delete', { id: hook.id }));
  });

  it('notifyChannels: a job names the channels it notifies; an id the account does not have is refused', async () => {
    const chosen = await ok(bob.call('channel_add', { type: 'webhook', url: `${receiver.url}/chosen` }));
    const other = await ok(bob.call('channel_add', { type: 'webhook', url: `${receiver.url}/other` }));
    const alices = await ok(alice.call('channel_add', { type: 'webhook', url: `${receiver.url}/alice` }));
    const before = storeMark(target.dataDir);
    expect(await fails(bob.call('cron_add', { url: `${receiver.url}/job2`, expression: 'manual', notifyChannels: `${chosen.id},${alices.id}` }), 3)).to.equal(`notifyChannels: channel ${alices.id} not found`);
    expect(await fails(bob.call('cron_add', { url: `${receiver.url}/job2`, expression: 'manual', notifyChannels: 'ops' }), 3)).to.match(/^notifyChannels: must be channel ids separated by commas/);
    expect(storeMark(target.dataDir)).to.deep.equal(before);
    receiverFailing = true;
    const job = await ok(bob.call('cron_add', { url: `${receiver.url}/job2`, expression: 'manual', name: 'picky', notifyChannels: ` ${chosen.id} , ${chosen.id}` }));
    expect(job.notifyChannels).to.equal(String(chosen.id));
    await ok(bob.call('cron_run', { id: job.id }));
    await waitFor(() => receiver.received.find((r) => r.url === '/chosen'), 'the chosen channel\'s call', 20_000);
    receiverFailing = false;
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.received.filter((r) => r.url === '/chosen')).to.have.length(1);
    expect(receiver.received.filter((r) => r.url === '/other')).to.have.length(0);
    expect((await ok(bob.call('cron_edit', { id: job.id, notifyChannels: '' }))).notifyChannels).to.equal('');
    for (const ch of [chosen, other]) await ok(bob.call('channel_delete', { id: ch.id }));
    await ok(alice.call('channel_delete', { id: alices.id }));
  });
});
