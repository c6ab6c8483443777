import { expect } from 'chai';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fails, ok, type ApiClient } from '../../support/api.ts';
import { embeddedTarget } from '../../support/targets.ts';
import { startTarget } from '../../support/target.ts';
import { startReceiver } from '../../integration/notifier/harness.ts';
import { waitFor } from '../../support/waitFor.ts';

/** A loopback port nothing listens on: a host that is down (connections refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * Quieter, smarter notifications through the public API (embedded mode, the default merge window,
 * real executions against real loopback targets, a real webhook receiver).
 */
describe('quieter notifications, end to end (embedded mode)', function () {
  this.timeout(120_000);
  let target: Awaited<ReturnType<typeof embeddedTarget>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver();
    target = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8' });
  });
  after(async () => {
    await target?.stop();
    await receiver?.close();
  });

  /** A fresh account with a webhook channel whose calls arrive at /<name>. */
  async function account(name: string): Promise<ApiClient> {
    const api = await target.newAccount({ name });
    await ok(api.call('channel_add', { type: 'webhook', url: `${receiver.url}/${name}` }));
    return api;
  }
  const messages = (name: string) => receiver.received.filter((r) => r.url === `/${name}`).map((r) => JSON.parse(r.body));

  it('a host outage of 50 jobs gives one message naming the host', async () => {
    const api = await account('outage');
    const port = await closedPort();
    // One instant for all fifty, far enough ahead for the batch to be written first.
    const at = Math.floor(Date.now() / 1000) + 3;
    const data = Array.from({ length: 50 }, (_, i) => ({ url: `http://127.0.0.1:${port}/job/${i + 1}`, name: `job ${i + 1}`, expression: 'manual', run: at }));
    const jobs = await ok<{ id: number }[]>(api.call('cron_batch_add', { data }));
    await waitFor(() => messages('outage').length, 'the outage message', 60_000);
    // Nothing else comes: the account's first message carried all fifty.
    await new Promise((r) => setTimeout(r, 4000));
    const [message, ...more] = messages('outage');
    expect(more).to.deep.equal([]);
    expect(message.count).to.equal(50);
    expect(message.hosts).to.have.length(1);
    expect(message.hosts[0]).to.include({ host: `127.0.0.1:${port}`, count: 50 });
    expect(message.hosts[0].jobs.sort((a: number, b: number) => a - b)).to.deep.equal(jobs.map((j) => j.id).sort((a, b) => a - b));
    expect(message.hosts[0].error).to.equal(`connection refused by 127.0.0.1:${port}`);
  });

  it('a flapping job (every other run failing) notifies by rate and not by the consecutive count', async () => {
    const api = await account('flapping');
    let calls = 0;
    const flapping = await startTarget(() => ({ status: ++calls % 2 === 1 ? 500 : 200 }));
    try {
      const job = await ok(api.call('cron_add', { url: `${flapping.url}/flap`, expression: 'manual', notifyEvery: 3, notifyFailureRate: 50, notifyFailureWindow: 60 }));
      expect(job).to.include({ notifyFailureRate: 50, notifyFailureWindow: 60 });
      for (let n = 1; n <= 8; n++) {
        await ok(api.call('cron_run', { id: job.id }));
        await waitFor(async () => (await ok<unknown[]>(api.call('cron_logs', { id: job.id }))).length === n, `run ${n} logged`, 20_000);
      }
      await waitFor(() => messages('flapping').length, 'the rate notification', 20_000);
      await new Promise((r) => setTimeout(r, 4000));
      const sent = messages('flapping');
      expect(sent.map((m) => m.event)).to.deep.equal(['rate']);
      expect(sent[0]).to.include({ id: job.id, status: 1, fail: 1 });
      expect(sent[0].reasons).to.deep.equal(['2 of 3 runs in the last 60 minutes failed (67%), at least 50% notifies']);
    } finally {
      await flapping.close();
    }
  });

});

/** Snoozes through the public API; a merge window of 0, so each notification goes out as it is decided. */
describe('cron_snooze and cron_unsnooze, end to end (embedded mode)', function () {
  this.timeout(120_000);
  let target: Awaited<ReturnType<typeof embeddedTarget>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver();
    target = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_NOTIFY_WINDOW_MS: '0' });
  });
  after(async () => {
    await target?.stop();
    await receiver?.close();
  });

  async function account(name: string): Promise<ApiClient> {
    const api = await target.newAccount({ name });
    await ok(api.call('channel_add', { type: 'webhook', url: `${receiver.url}/${name}` }));
    return api;
  }
  const messages = (name: string) => receiver.received.filter((r) => r.url === `/${name}`).map((r) => JSON.parse(r.body));

  it('cron_snooze silences a job until it recovers, or for a while; cron_unsnooze ends it; bad input changes nothing', async () => {
    const api = await account('snoozed');
    let failing = true;
    const flaky = await startTarget(() => ({ status: failing ? 500 : 200 }));
    try {
      const job = await ok(api.call('cron_add', { url: `${flaky.url}/job`, expression: 'manual', notifyReminder: 1 }));
      expect(job).to.include({ notifyReminder: 1 });
      let runs = 0;
      const runOnce = async () => {
        await ok(api.call('cron_run', { id: job.id }));
        runs += 1;
        await waitFor(async () => (await ok<unknown[]>(api.call('cron_logs', { id: job.id }))).length === runs, `run ${runs} logged`, 20_000);
      };
      await runOnce();
      await waitFor(() => messages('snoozed').length === 1, 'the first failure told');

      expect(await ok(api.call('cron_snooze', { id: job.id }))).to.deep.equal({ id: job.id, snoozed: true, until: null, untilRecovery: true });
      await runOnce();
      await runOnce();
      failing = false;
      await runOnce();
      await waitFor(() => messages('snoozed').length === 2, 'the recovery told');
      expect(messages('snoozed').map((m) => m.event)).to.deep.equal(['failed', 'okay']);

      // For a while: until is the end, in Unix seconds.
      const before = Math.floor(Date.now() / 1000);
      const timed = await ok(api.call('cron_snooze', { id: job.id, for: '2 hours' }, { as: 'form' }));
      expect(timed).to.include({ id: job.id, snoozed: true, untilRecovery: false });
      expect(timed.until).to.be.within(before + 7200, Math.floor(Date.now() / 1000) + 7200);
      failing = true;
      await runOnce();
      expect(await ok(api.call('cron_unsnooze', { id: job.id }))).to.deep.equal({ id: job.id, snoozed: false, until: null, untilRecovery: false });
      await runOnce();
      await waitFor(() => messages('snoozed').length === 3, 'the failure after the snooze told');
      expect(messages('snoozed').at(-1).fail).to.equal(2);

      const other = await account('snoozed-other');
      expect(await fails(api.call('cron_snooze', { id: job.id, for: 'soon' }), 3)).to.match(/^for: 'soon' is not a duration/);
      expect(await fails(api.call('cron_snooze', {}), 4)).to.match(/^id: is required/);
      const foreign = await fails(other.call('cron_snooze', { id: job.id }), 5);
      const missing = await fails(other.call('cron_snooze', { id: 99_999_999 }), 5);
      expect(foreign.replace(String(job.id), 'N')).to.equal(missing.replace('99999999', 'N'));
      expect(await ok(api.call('cron_unsnooze', { id: job.id }))).to.include({ snoozed: false });
    } finally {
      await flaky.close();
    }
  });
});
