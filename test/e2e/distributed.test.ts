import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, ok } from '../support/api.ts';
import { makeTestPki, tlsEnv } from '../support/certs.ts';
import { distributedEnv, runCli, startService, type ServiceProcess } from '../support/processes.ts';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

describe('distributed mode: every service its own process, on NATS, gRPC over mutual TLS plus the service token', function () {
  this.timeout(90_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-dist-'));
  const pki = makeTestPki();
  const procs: ServiceProcess[] = [];
  let env: Record<string, string>;
  let api: ReturnType<typeof apiClient>;

  before(async () => {
    env = await distributedEnv(dataDir, { NATS_URL, ...tlsEnv(pki), TOCK_GRPC_TLS_SERVER_NAME: 'localhost' });
    procs.push(await startService('jobs', env, /jobs service listening/));
    procs.push(await startService('gateway', env, /gateway listening/));
    const created = await runCli(['account', 'create', '--name', 'dist'], env);
    expect(created.code, created.stderr).to.equal(0);
    const token = /token: ([A-Za-z0-9]{32})/.exec(created.stdout)![1];
    api = apiClient(`http://127.0.0.1:${env.PORT}`, token);
  });

  after(async () => {
    for (const p of procs.reverse()) await p.kill();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(pki.dir, { recursive: true, force: true });
  });

  it('serves cron_add and cron_get through the gateway process and the jobs process', async () => {
    const added: any = await ok(api.call('cron_add', { url: 'https://example.com/d', expression: '0 12 * * *', name: 'dist' }));
    expect(added).to.include({ url: 'https://example.com/d', name: 'dist', status: 0 });
    expect(await ok(api.call('cron_get', { id: added.id }))).to.deep.equal(added);
  });

  it('keeps jobs when the jobs process is killed and restarted (rebuilt from the event store)', async () => {
    const added: any = await ok(api.call('cron_add', { url: 'https://example.com/k', expression: '@daily' }));
    const jobs = procs.find((p) => p.name === 'jobs')!;
    await jobs.kill('SIGKILL');
    procs.splice(procs.indexOf(jobs), 1, await startService('jobs', env, /jobs service listening/));
    expect(await ok(api.call('cron_get', { id: added.id }))).to.deep.equal(added);
  });
});
