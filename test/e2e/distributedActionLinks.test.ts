import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, ok } from '../support/api.ts';
import { capture } from '../support/capture.ts';
import { startReceiver } from '../integration/notifier/harness.ts';
import { natsForThisSuite } from '../support/natsServer.ts';
import { distributedEnv, freePort, runCli, SERVICE_READY, startService, type ServiceProcess } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const PUBLIC = 'https://cron.example.com';

/**
 * Action links in distributed mode: every service its own process on NATS and one SQLite store,
 * two notifiers and two gateways (each gateway asking its own notifier). A link made by one
 * notifier is checked and spent through the other replica, and only once in all.
 */
describe('action links in distributed mode: two notifiers, two gateways', function () {
  const nats = natsForThisSuite();
  this.timeout(180_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-dist-links-'));
  const procs: ServiceProcess[] = [];
  const gateways: string[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let api: ReturnType<typeof apiClient>;

  before(async () => {
    receiver = await startReceiver();
    target = await startTarget(() => ({ status: 503 }));
    const env = await distributedEnv(dataDir, { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_PUBLIC_URL: PUBLIC, TOCK_NOTIFY_WINDOW_MS: '1000' });
    const start = async (name: keyof typeof SERVICE_READY, extra: Record<string, string> = {}) => procs.push(await startService(name, { ...env, ...extra }, SERVICE_READY[name], 90_000));
    await Promise.all([start('jobs'), start('logs')]);
    await Promise.all([start('planner'), start('executor')]);
    for (let n = 0; n < 2; n++) {
      const [grpc, http, ops] = await Promise.all([freePort(), freePort(), freePort()]);
      await start('notifier', { NOTIFIER_GRPC_PORT: String(grpc), OPS_PORT: String(await freePort()) });
      await start('gateway', { NOTIFIER_ADDR: `127.0.0.1:${grpc}`, PORT: String(http), OPS_PORT: String(ops) });
      gateways.push(`http://127.0.0.1:${http}`);
    }
    const created = await runCli(['account', 'create', '--name', 'links'], env);
    expect(created.code, created.stderr).to.equal(0);
    api = apiClient(gateways[0]!, capture(/token: ([A-Za-z0-9]{32})/, created.stdout));
  });
  after(async () => {
    for (const p of procs.reverse()) await p.kill();
    await receiver?.close();
    await target?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await nats.stop();
  });

  it('a notification links to its job; a GET on either gateway changes nothing, the first POST acts and the second, on the other replica, is refused', async () => {
    await ok(api.call('channel_add', { type: 'webhook', url: `${receiver.url}/hook` }));
    const job = await ok(api.call('cron_add', { name: 'far', url: `${target.url}/far`, expression: 'manual' }));
    await ok(api.call('cron_run', { id: job.id }));
    const message = await waitFor(() => receiver.received[0] && JSON.parse(receiver.received[0].body), 'the notification', 60_000);
    const links = message.actions as Record<string, string>;
    expect(Object.keys(links).sort()).to.deep.equal(['logs', 'pause1h', 'run', 'silence']);
    const token = links.pause1h!.slice(`${PUBLIC}/a/`.length);
    for (const base of gateways) {
      const page = await fetch(`${base}/a/${token}`);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.include('Pause for 1 hour');
    }
    expect(await ok(api.call('cron_get', { id: job.id }))).to.include({ status: 0, pausedUntil: null });
    const post = (base: string) => fetch(`${base}/a/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
    const first = await post(gateways[1]!);
    expect(first.status).to.equal(200);
    expect(await ok(api.call('cron_get', { id: job.id }))).to.include({ status: 5 });
    const second = await post(gateways[0]!);
    expect(second.status).to.equal(410);
    expect(await second.text()).to.include('Link already used');
  });
});
