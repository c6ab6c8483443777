import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadAll } from 'js-yaml';
import { Cluster } from './cluster.ts';
import type { Obj, Store } from './kubelet.ts';
import { podsOf, workloadsOf } from './kubelet.ts';
import { startPeer, type Peer } from './peers.ts';
import { attempt, PODMAN, sh } from './podman.ts';
import { execCommands, kubectlShim, readReadme, secretCommands, type Store as EventStore } from './readme.ts';

/**
 * `npm run test:deploy`: deploy/k8s run as containers, as an operator following deploy/README.md
 * would run them. Images built locally (images.sh), overlays rendered with kubectl kustomize, the
 * Secrets made by the README's own commands, every Deployment and StatefulSet of the postgres
 * overlay run with podman as the kubelet would (kubelet.ts), NetworkPolicies enforced with
 * nftables (netpol.ts), then the README's first steps: an account, a job, its log, a notification.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const README = readReadme(join(ROOT, 'deploy/README.md'));
const KEEP = process.env.TOCK_DEPLOY_KEEP === '1';

function buildImages(): Record<string, string> {
  const out = sh(join(ROOT, 'test/deploy/images.sh'), [], { cwd: ROOT });
  return Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ') as [string, string]));
}

/** Runs the README's Secret commands (with the kubectl shim first on PATH) in `dir`; the Secrets and what was applied. */
function readmeSecrets(dir: string, store: EventStore): { store: Store['secrets']; applied: string[] } {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(join(dir, 'bin/kubectl'), kubectlShim('/usr/bin/kubectl', PODMAN.join(' ')), { mode: 0o755 });
  mkdirSync(join(dir, 'work'), { recursive: true });
  sh('bash', ['-euo', 'pipefail', '-c', secretCommands(README, store)], { cwd: join(dir, 'work'), env: { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, TOCK_DEPLOY_STATE: dir } });
  const secrets: Store['secrets'] = new Map();
  for (const f of readdirSync(join(dir, 'secrets'))) {
    const s = JSON.parse(readFileSync(join(dir, 'secrets', f), 'utf8')) as Obj;
    secrets.set(s.metadata.name, Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64')])));
  }
  let applied: string[] = [];
  try {
    applied = readFileSync(join(dir, 'applied'), 'utf8').trim().split('\n');
  } catch {
    // nothing applied by these blocks
  }
  return { store: secrets, applied };
}

const render = (overlay: string): Obj[] => (loadAll(sh('kubectl', ['kustomize', join(ROOT, overlay)])) as Obj[]).filter(Boolean);
const configMaps = (docs: Obj[]) => new Map(docs.filter((d) => d.kind === 'ConfigMap').map((d) => [d.metadata.name as string, (d.data ?? {}) as Record<string, string>]));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(fn: () => Promise<T | false | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await fn().catch(() => false as const);
    if (v) return v;
    await sleep(1000);
  }
  throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
}

describe('deployment: deploy/k8s run as containers with podman (npm run test:deploy)', function () {
  this.timeout(30 * 60_000);
  const state = mkdtempSync('/var/tmp/tock-deploy-run-');
  let images: Record<string, string>;
  const started = Date.now();

  before(() => {
    images = buildImages();
    console.log(`      images ready after ${Math.round((Date.now() - started) / 1000)} s`);
  });
  after(() => {
    if (!KEEP) rmSync(state, { recursive: true, force: true });
  });

  it('production overlay: renders, and with the README\'s EventStoreDB Secrets every pod gets each Secret, key and ConfigMap it names', () => {
    const docs = render('deploy/k8s/overlays/production');
    const { store: secrets } = readmeSecrets(join(state, 'production'), 'eventstore');
    const store: Store = { secrets, configMaps: configMaps(docs) };
    // EventStoreDB has no Debian package to build an image from: this overlay's pods are checked up to the start.
    const pods = workloadsOf(docs).flatMap((w) => podsOf(w, store, { ...images, 'eventstore/eventstore:24.10': 'none' }));
    expect(pods.length).to.be.greaterThan(10);
  });

  describe('postgres overlay, run', () => {
    let cluster: Cluster;
    let target: Peer;
    let webhook: Peer;
    let token = '';
    let docs: Obj[];

    before(async function () {
      const { store: secrets, applied } = readmeSecrets(join(state, 'postgres'), 'postgres');
      expect(applied, 'the README applies the postgres overlay').to.deep.equal(['deploy/k8s/overlays/postgres']);
      docs = render(applied[0]!);
      cluster = new Cluster(docs, { secrets, configMaps: configMaps(docs) }, images, join(state, 'postgres'));
      await Cluster.networks();
      target = await startPeer('tock-deploy-target', 10, images.node!);
      webhook = await startPeer('tock-deploy-webhook', 11, images.node!);
      // The stores first (a cluster would start everything at once, the services restarting until they answer).
      await cluster.start(['postgres', 'nats']);
      await cluster.waitReady(['postgres', 'nats'], 5 * 60_000);
      const rest = workloadsOf(docs).map((w) => w.metadata.name as string).filter((n) => n !== 'postgres' && n !== 'nats');
      await cluster.start(rest);
      await cluster.waitReady(rest, 8 * 60_000);
      console.log(`      every pod ready after ${Math.round((Date.now() - started) / 1000)} s`);
    });
    after(async () => {
      if (KEEP) return;
      await cluster?.destroy();
      await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'rm', '-f', '-t', '0', 'tock-deploy-target', 'tock-deploy-webhook'], 60_000);
    });

    it('runs every Deployment and StatefulSet at its declared replica count, every pod ready, none restarted by a probe', () => {
      for (const w of workloadsOf(docs)) {
        const pods = new Set(cluster.running.filter((r) => r.pod.workload === w.metadata.name).map((r) => r.pod.name));
        expect(pods.size, `${w.metadata.name} replicas`).to.equal(w.spec.replicas ?? 1);
      }
      expect(cluster.running.filter((r) => r.pod.workload === 'jobs').length).to.equal(2);
      expect(cluster.running.filter((r) => r.pod.workload === 'planner').length).to.equal(2);
      expect(cluster.running.every((r) => r.state.ready)).to.equal(true);
      expect(cluster.probeRestarts()).to.deep.equal([]);
    });

    it('README step 4: the first account, created with its command in a jobs pod', async () => {
      const [command] = execCommands(README, 'accounts create');
      expect(command, 'the README gives the command').to.be.a('string');
      mkdirSync(join(state, 'postgres/exec'), { recursive: true });
      writeFileSync(join(state, 'postgres/exec/jobs'), cluster.execTarget('jobs'));
      const out = sh('bash', ['-euo', 'pipefail', '-c', command!], { env: { ...process.env, PATH: `${join(state, 'postgres/bin')}:${process.env.PATH}`, TOCK_DEPLOY_STATE: join(state, 'postgres') } });
      token = /^token: (\S+)$/m.exec(out)?.[1] ?? '';
      expect(token, `a token in:\n${out.replace(/token: \S+/, 'token: ***')}`).to.not.equal('');
    });

    /** An API call through the gateway Service (port 80), waiting out the rate limit (1 a second in tock-config). */
    async function api(fn: string, params: Obj): Promise<any> {
      const { ip, port } = cluster.service('gateway', 80);
      for (;;) {
        const res = await fetch(`http://${ip}:${port}/api/v1/${fn}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(params) });
        const body = (await res.json()) as Obj;
        // Error 12: over the rate limit (HTTP 503 with Retry-After).
        if (body.code === 12) {
          await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
          continue;
        }
        if (body.status !== 'success') throw new Error(`${fn}: ${res.status} ${JSON.stringify(body)}`);
        return body.data;
      }
    }

    it('a job added through the gateway Service calls the target every second, and each run is in cron_logs', async () => {
      const job = await api('cron_add', { url: `${target.url}/ok`, expression: '* * * * * *', name: 'deploy test' });
      await waitFor(async () => (await target.received()).filter((r) => r.url === '/ok').length >= 3, 90_000, 'three calls on the target');
      const logs: any[] = await waitFor(async () => {
        const list = await api('cron_logs', { id: job.id });
        return list.length >= 2 && list;
      }, 60_000, 'two executions in cron_logs');
      const called = new Set((await target.received()).filter((r) => r.url === '/ok').map((r) => Number(r.headers['x-tock-scheduled-time'])));
      for (const { result } of logs) {
        expect(result).to.include({ status: 0, httpStatus: 200, output: 'ok' });
        expect(result.server, 'run by one of the executor pods').to.match(/^executor-\d$/);
        expect(called.has(result.time), `run ${result.time} reached the target`).to.equal(true);
      }
      await api('cron_disable', { id: job.id });
    });

    it('a failed run notifies the webhook channel', async () => {
      await api('channel_add', { type: 'webhook', url: `${webhook.url}/hook/deploy` });
      const job = await api('cron_add', { url: `${target.url}/fail`, expression: 'manual', name: 'fails' });
      await api('cron_run', { id: job.id });
      const hook = await waitFor(async () => (await webhook.received()).find((r) => r.url === '/hook/deploy'), 90_000, 'the notification on the webhook');
      expect(hook.body).to.include('fails');
      expect(hook.headers['x-tock-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    });

    /** A TCP connection from a pod's first container: 'connected', or the error code. */
    async function connectFrom(workload: string, ip: string, port: number): Promise<string> {
      const script = `const s=require('net').connect(${port},'${ip}');s.on('connect',()=>{console.log('connected');process.exit(0)});s.on('error',(e)=>{console.log(e.code);process.exit(0)});setTimeout(()=>{console.log('TIMEOUT');process.exit(0)},5000)`;
      return (await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'exec', cluster.execTarget(workload), 'node', '-e', script], 30_000)).out.trim();
    }

    it('NetworkPolicies: the flows the architecture needs connect, others are refused', async () => {
      const at = (name: string, port: number) => cluster.service(name, port).ip;
      // Needed (and already used above: gateway -> jobs and logs, everything -> nats, -> postgres).
      expect(await connectFrom('gateway', at('jobs', 50051), 50051)).to.equal('connected');
      expect(await connectFrom('executor', at('nats', 4222), 4222)).to.equal('connected');
      expect(await connectFrom('logs', at('postgres', 5432), 5432)).to.equal('connected');
      // Forbidden: the executor runs user requests, so it reaches neither the jobs gRPC port, nor PostgreSQL, nor a private address.
      expect(await connectFrom('executor', at('jobs', 50051), 50051)).to.equal('ECONNREFUSED');
      expect(await connectFrom('executor', at('postgres', 5432), 5432)).to.equal('ECONNREFUSED');
      expect(await connectFrom('gateway', at('nats', 4222), 4222)).to.equal('ECONNREFUSED');
      // The AdminService port is reachable from inside the jobs pod only.
      expect(await connectFrom('gateway', at('jobs', 50051), 50055)).to.equal('ECONNREFUSED');
    });
  });
});
