import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, ok, rawRequest } from '../support/api.ts';
import { dropSchema, requirePostgres, schemaName, urlWithSchema } from '../support/postgres.ts';
import { capture } from '../support/capture.ts';
import { makeTestPki, tlsEnv } from '../support/certs.ts';
import { nth } from '../support/nth.ts';
import { sampleSum } from '../support/metricsText.ts';
import { distributedEnv, freePort, runCli, startedTogether, startService, type DistributedEnv, type ServiceProcess } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';
import { natsForThisSuite } from '../support/natsServer.ts';
import { withoutRunFields } from '../support/jobFixtures.ts';


describe('distributed mode: every service its own process, on NATS, gRPC over mutual TLS plus the service token', function () {
  const nats = natsForThisSuite();
  this.timeout(90_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-dist-'));
  const pki = makeTestPki();
  const procs: ServiceProcess[] = [];
  let env: DistributedEnv;
  let api: ReturnType<typeof apiClient>;
  let gatewayOps: string;

  before(async () => {
    env = await distributedEnv(dataDir, { NATS_URL: nats.url, ...tlsEnv(pki), TOCK_GRPC_TLS_SERVER_NAME: 'localhost' });
    // The logs service too: job records carry their health from it.
    await startedTogether(procs, [startService('jobs', env, /jobs service listening/), startService('logs', env, /logs service listening/)]);
    const opsPort = await freePort();
    gatewayOps = `http://127.0.0.1:${opsPort}`;
    procs.push(await startService('gateway', { ...env, OPS_PORT: String(opsPort) }, /gateway listening/));
    const created = await runCli(['account', 'create', '--name', 'dist'], env);
    expect(created.code, created.stderr).to.equal(0);
    const token = capture(/token: ([A-Za-z0-9]{32})/, created.stdout);
    api = apiClient(`http://127.0.0.1:${env.PORT}`, token);
  });

  after(async () => {
    for (const p of procs.reverse()) await p.kill();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(pki.dir, { recursive: true, force: true });
    await nats.stop();
  });

  it('serves cron_add and cron_get through the gateway process and the jobs process', async () => {
    const added: any = await ok(api.call('cron_add', { url: 'https://example.com/d', expression: '0 12 * * *', name: 'dist' }));
    expect(added).to.include({ url: 'https://example.com/d', name: 'dist', status: 0 });
    expect(await ok(api.call('cron_get', { id: added.id }))).to.deep.equal(added);
  });

  it('serves /metrics on its operations port only: the public port answers 404 and keeps /healthz and /readyz', async () => {
    await ok(api.call('cron_list'));
    const onPublic = await fetch(`http://127.0.0.1:${env.PORT}/metrics`);
    expect(onPublic.status).to.equal(404);
    expect(await onPublic.text()).not.to.include('tock_');
    for (const path of ['/healthz', '/readyz']) {
      expect((await fetch(`http://127.0.0.1:${env.PORT}${path}`)).status, `public ${path}`).to.equal(200);
      expect((await fetch(`${gatewayOps}${path}`)).status, `ops ${path}`).to.equal(200);
    }
    const scraped = await fetch(`${gatewayOps}/metrics`);
    expect(scraped.status).to.equal(200);
    expect(sampleSum(await scraped.text(), 'tock_api_request_duration_seconds_count', { function: 'cron_list', code: '0' })).to.be.at.least(1);
  });

  it('keeps jobs when the jobs process is killed and restarted (rebuilt from the event store)', async () => {
    const added: any = await ok(api.call('cron_add', { url: 'https://example.com/k', expression: '@daily' }));
    const jobs = procs.find((p) => p.name === 'jobs')!;
    await jobs.kill('SIGKILL');
    procs.splice(procs.indexOf(jobs), 1, await startService('jobs', env, /jobs service listening/));
    expect(await ok(api.call('cron_get', { id: added.id }))).to.deep.equal(added);
  });
});

describe('distributed mode on PostgreSQL + NATS: two replicas of every service', function () {
  const nats = natsForThisSuite();
  this.timeout(180_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-dist-pg-'));
  const schema = schemaName('tock_e2e');
  const procs = new Map<string, ServiceProcess>();
  const envs: DistributedEnv[] = [];
  let target: Awaited<ReturnType<typeof startTarget>>;
  let apis: ReturnType<typeof apiClient>[];

  const start = async (key: string, env: Record<string, string>, ready: RegExp) => {
    procs.set(key, await startService(key.replace(/-\d$/, ''), { ...env, TOCK_SERVER_NAME: key }, ready, 90_000));
  };

  before(async function () {
    await requirePostgres.call(this);
    target = await startTarget();
    // Replica n: its own gRPC ports, its gateway talking to its own jobs, planner and logs.
    const shared = { NATS_URL: nats.url, EVENTSTORE_URL: urlWithSchema(schema), TOCK_ALLOW_NETWORKS: '127.0.0.0/8' };
    for (let n = 0; n < 2; n++) envs.push(await distributedEnv(join(dataDir, `replica-${n}`), shared));
    await Promise.all(envs.flatMap((env, n) => [start(`jobs-${n}`, env, /jobs service listening/), start(`logs-${n}`, env, /logs service listening/)]));
    await Promise.all(envs.flatMap((env, n) => [start(`planner-${n}`, env, /planner service listening/), start(`executor-${n}`, env, /executor consuming due runs/)]));
    await Promise.all(envs.map((env, n) => start(`gateway-${n}`, env, /gateway listening/)));
    const created = await runCli(['account', 'create', '--name', 'dist-pg'], nth(envs));
    expect(created.code, created.stderr).to.equal(0);
    const token = capture(/token: ([A-Za-z0-9]{32})/, created.stdout);
    apis = envs.map((env) => apiClient(`http://127.0.0.1:${env.PORT}`, token));
  });

  after(async () => {
    for (const p of [...procs.values()].reverse()) await p.kill();
    await target?.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (envs.length) await Promise.all([dropSchema(schema), dropSchema(`${schema}_logs`)]);
    await nats.stop();
  });

  it('shares one logs read model and one durable between the logs replicas', () => {
    const durables = [0, 1].map((n) => /"durable":"([^"]+)"/.exec(procs.get(`logs-${n}`)!.output.join(''))?.[1]);
    expect(durables[0]).to.be.a('string');
    expect(durables[1]).to.equal(durables[0]);
  });

  it('serves a job written through one replica from the other, runs each occurrence once, and logs it on both', async () => {
    const added: any = await ok(apis[0]!.call('cron_add', { url: `${target.url}/every-second`, expression: '* * * * * *' }));
    const seen = await waitFor(() => ok(apis[1]!.call('cron_get', { id: added.id })).catch(() => undefined), 'the job on the other replica', 10_000);
    // Every second: its first runs may come between the two reads.
    expect(withoutRunFields(seen)).to.deep.equal(withoutRunFields(added));
    const first = Math.ceil(Date.now() / 1000) + 2;
    const last = first + 5;
    await new Promise((r) => setTimeout(r, (last + 2) * 1000 - Date.now()));
    await ok(apis[1]!.call('cron_disable', { id: added.id }));
    const runs = target.received.map((r) => String(r.headers['x-tock-run-id'])).filter((id) => {
      const at = Number(id.split(':')[1]) / 1000;
      return at >= first && at <= last;
    });
    expect(runs, 'each occurrence once, with two planners and two executors').to.have.length(last - first + 1);
    expect(new Set(runs).size).to.equal(runs.length);
    for (const api of apis) {
      const times = await waitFor(async () => {
        const logs = await ok<any[]>(api.call('cron_logs', { id: added.id, limit: 1000 }));
        const inWindow = logs.map((l) => l.result.time as number).filter((t) => t >= first && t <= last);
        return inWindow.length >= runs.length && inWindow;
      }, 'cron_logs to show every run', 20_000);
      expect(times.sort()).to.deep.equal(Array.from({ length: last - first + 1 }, (_, i) => first + i));
    }
  });

  it('badges and the calendar across replicas: a badge issued on one is served and revoked on both; both planners give one calendar', async () => {
    const job: any = await ok(apis[0]!.call('cron_add', { url: `${target.url}/badge`, expression: '0 * * * *', name: 'replicated' }));
    const badge: any = await ok(apis[0]!.call('cron_badge', { id: job.id }));
    const bases = envs.map((env) => `http://127.0.0.1:${env.PORT}`);
    for (const base of bases) {
      const svg = await waitFor(async () => {
        const r = await rawRequest(base, badge.path, { method: 'GET' });
        return r.http === 200 && r.text;
      }, `the badge on ${base}`, 10_000);
      expect(svg).to.match(/<text x="[\d.]+" y="14">replicated<\/text>/);
    }
    expect((await ok<any>(apis[1]!.call('cron_badge', { id: job.id }))).token).to.equal(badge.token);
    const runsOf = (api: ReturnType<typeof apiClient>) =>
      waitFor(async () => {
        const c: any = await ok(api.call('account_calendar', { hours: 2 }));
        const times = c.runs.filter((r: any) => r.id === job.id).map((r: any) => r.time);
        return times.length > 0 && times;
      }, 'the job in the calendar', 10_000);
    const [a, b] = await Promise.all(apis.map(runsOf));
    expect(a).to.deep.equal(b);
    expect(a![0] % 3600).to.equal(0);
    await ok(apis[1]!.call('cron_badge_revoke', { id: job.id }));
    for (const base of bases) await waitFor(async () => (await rawRequest(base, badge.path, { method: 'GET' })).http === 404, `the badge gone on ${base}`, 10_000);
  });

  it('keeps jobs when a jobs replica is killed and restarted (rebuilt from PostgreSQL)', async () => {
    const added: any = await ok(apis[1]!.call('cron_add', { url: `${target.url}/k`, expression: '@daily' }));
    // The record as the other gateway shows it once its planner replica has planned the job
    // (cron_add's own answer may come before: its nextRun is then null).
    const seen = await waitFor(async () => {
      const got: any = await ok(apis[0]!.call('cron_get', { id: added.id }));
      return got.nextRun !== null && got;
    }, 'the job planned behind the other gateway', 10_000);
    expect({ ...seen, nextRun: added.nextRun }).to.deep.equal(added);
    await procs.get('jobs-0')!.kill('SIGKILL');
    await start('jobs-0', nth(envs), /jobs service listening/);
    expect(await ok(apis[0]!.call('cron_get', { id: added.id }))).to.deep.equal(seen);
  });
});
