import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster } from './cluster.ts';
import { apiOf, appliedIn, buildImages, configMaps, execTargets, readmeSecrets, README, render, ROOT, runReadme, secretsIn } from './harness.ts';
import type { Obj, Store } from './kubelet.ts';
import { podsOf, workloadsOf } from './kubelet.ts';
import { startPeer, type Peer } from './peers.ts';
import { attempt, podman, PODMAN } from './podman.ts';
import { execCommands, exporterCommands } from './readme.ts';
import { exactlyOnceDuring, type Tally, upgradeOrder } from './rollout.ts';
import { SLOWLY, waitFor } from '../support/waitFor.ts';

/**
 * `npm run test:deploy`: deploy/k8s run as containers, as an operator following deploy/README.md
 * would run them. Images built locally (images.sh), overlays rendered with kubectl kustomize, the
 * Secrets made by the README's own commands, every Deployment and StatefulSet of the postgres
 * overlay run with podman as the kubelet would (kubelet.ts), NetworkPolicies enforced with
 * nftables (netpol.ts). The pods start on the previous release's image and are upgraded in
 * UPGRADING.md's order while a job runs every second; then the README's first steps on this
 * release (an account, a job, its log, a notification) and a rollout of the executors under load.
 */

const KEEP = process.env.TOCK_DEPLOY_KEEP === '1';

/** One line for the note: the window and what was lost or doubled at the target and in cron_logs. */
const figures = (t: Tally) =>
  `${t.last - t.first + 1} s of runs: ${t.lost.length} lost, ${t.doubled.length} made twice; cron_logs ${t.loggedLost.length} missing, ${t.loggedDoubled.length} twice`;
const exactlyOnce = (t: Tally) => ({ lost: t.lost, doubled: t.doubled, loggedLost: t.loggedLost, loggedDoubled: t.loggedDoubled });
const NONE = { lost: [], doubled: [], loggedLost: [], loggedDoubled: [] };

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
    const dir = join(state, 'postgres');
    const api = (fn: string, params: Obj) => apiOf(cluster, () => token)(fn, params);
    /** The images of the release before this one: tock:latest is the previous commit's build. */
    const previous = () => ({ ...images, 'tock:latest': images['tock:previous']! });

    before(async function () {
      const { store: secrets, applied } = readmeSecrets(dir, 'postgres');
      expect(applied, 'the README applies the postgres overlay').to.deep.equal(['deploy/k8s/overlays/postgres']);
      docs = render(applied[0]!);
      cluster = new Cluster(docs, { secrets, configMaps: configMaps(docs) }, previous(), dir);
      await Cluster.networks();
      target = await startPeer('tock-deploy-target', 10, images.node!);
      webhook = await startPeer('tock-deploy-webhook', 11, images.node!);
      // The stores first (a cluster would start everything at once, the services restarting until they answer).
      await cluster.start(['postgres', 'nats']);
      await cluster.waitReady(['postgres', 'nats'], 5 * 60_000);
      const rest = workloadsOf(docs).map((w) => w.metadata.name as string).filter((n) => n !== 'postgres' && n !== 'nats');
      await cluster.start(rest);
      await cluster.waitReady(rest, 8 * 60_000);
      console.log(`      every pod ready after ${Math.round((Date.now() - started) / 1000)} s (previous release)`);
    });
    after(async () => {
      if (KEEP) return;
      await cluster?.destroy();
      await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'rm', '-f', '-t', '0', 'tock-deploy-target', 'tock-deploy-webhook'], 60_000);
    });

    /** Every workload at its declared replica count, every pod ready, none restarted by a probe. */
    function declaredAndReady() {
      for (const w of workloadsOf(docs)) {
        const pods = new Set(cluster.running.filter((r) => r.pod.workload === w.metadata.name).map((r) => r.pod.name));
        expect(pods.size, `${w.metadata.name} replicas`).to.equal(w.spec.replicas ?? 1);
      }
      expect(cluster.running.filter((r) => r.pod.workload === 'jobs').length).to.equal(2);
      expect(cluster.running.filter((r) => r.pod.workload === 'planner').length).to.equal(2);
      expect(cluster.running.every((r) => r.state.ready)).to.equal(true);
      expect(cluster.probeRestarts()).to.deep.equal([]);
    }

    /** README step 4's command, run in a jobs pod as written: the account's token. */
    function createAccount(): string {
      const [command] = execCommands(README, 'accounts create');
      expect(command, 'the README gives the command').to.be.a('string');
      execTargets(dir, cluster, ['jobs']);
      const out = runReadme(dir, command!);
      const created = /^token: (\S+)$/m.exec(out)?.[1] ?? '';
      expect(created, `a token in:\n${out.replace(/token: \S+/, 'token: ***')}`).to.not.equal('');
      return created;
    }

    it('runs every Deployment and StatefulSet at its declared replica count, every pod ready, none restarted by a probe', () => {
      declaredAndReady();
    });

    it(`upgrade from the previous release's image to this one while a job whose calls take 2 s runs every second, in UPGRADING.md's order: no run lost or made twice`, async () => {
      token = createAccount();
      const deployments = workloadsOf(docs).filter((w) => w.kind === 'Deployment').map((w) => w.metadata.name as string);
      const order = upgradeOrder(readFileSync(join(ROOT, 'UPGRADING.md'), 'utf8'), deployments);
      expect(order.map((s) => s.workload).sort(), 'the order rolls every Deployment once').to.deep.equal([...deployments].sort());
      const began = Date.now();
      const steps: string[] = [];
      const t = await exactlyOnceDuring(api, target, '/slow/upgrade', async () => {
        for (const step of order) {
          const stops = await cluster.roll(step.workload, images, { together: step.together, readyMs: 5 * 60_000 });
          steps.push(`${step.workload} ${stops.map((x) => `${x.seconds.toFixed(0)} s`).join('/')}`);
          for (const x of stops) expect(x.exitCodes, `${x.pod} stopped on SIGTERM within its grace period`).to.deep.equal([0]);
        }
      });
      console.log(`      upgrade in ${Math.round((Date.now() - began) / 1000)} s (stops: ${steps.join(', ')}); ${figures(t)}`);
      expect(exactlyOnce(t)).to.deep.equal(NONE);
      expect(cluster.running.filter((r) => r.pod.workload !== 'postgres' && r.pod.workload !== 'nats').every((r) => r.container.image === images['tock:latest'])).to.equal(true);
      declaredAndReady();
    });

    it('README step 4 on this release: an account created with its command in a jobs pod', () => {
      token = createAccount();
    });

    it('a job added through the gateway Service calls the target every second, and each run is in cron_logs', async () => {
      const job = await api('cron_add', { url: `${target.url}/ok`, expression: '* * * * * *', name: 'deploy test' });
      await waitFor(async () => (await target.received()).filter((r) => r.url === '/ok').length >= 3, 'three calls on the target', 90_000, SLOWLY);
      const logs: any[] = await waitFor(async () => {
        const list = await api('cron_logs', { id: job.id });
        return list.length >= 2 && list;
      }, 'two executions in cron_logs', 60_000, SLOWLY);
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
      const hook = await waitFor(async () => (await webhook.received()).find((r) => r.url === '/hook/deploy'), 'the notification on the webhook', 90_000, SLOWLY);
      expect(hook.body).to.include('fails');
      expect(hook.headers['x-tock-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    });

    it('a rollout of the executors while a job whose calls take 2 s runs every second (SIGTERM, the drain, then the new pod): no run lost or made twice', async () => {
      const began = Date.now();
      let stops: Awaited<ReturnType<Cluster['roll']>> = [];
      const t = await exactlyOnceDuring(api, target, '/slow/rollout', async () => {
        stops = await cluster.roll('executor', images, { readyMs: 5 * 60_000 });
      });
      const grace = workloadsOf(docs).find((w) => w.metadata.name === 'executor')!.spec.template.spec.terminationGracePeriodSeconds as number;
      console.log(`      executors rolled in ${Math.round((Date.now() - began) / 1000)} s (stops: ${stops.map((x) => `${x.seconds.toFixed(1)} s`).join(', ')} of ${grace} s allowed); ${figures(t)}`);
      for (const x of stops) expect(x.exitCodes, `${x.pod} drained and exited on SIGTERM`).to.deep.equal([0]);
      expect(exactlyOnce(t)).to.deep.equal(NONE);
      declaredAndReady();
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

    it("PostgreSQL's metrics (README 6b): the role and Secret made as written, the exporter answers pg_up 1 as a pg_monitor role and reaches nothing else", async () => {
      const script = exporterCommands(README);
      expect(script, 'the README sets up the exporter').to.be.a('string');
      execTargets(dir, cluster, ['postgres']);
      runReadme(dir, script!);
      expect(appliedIn(dir).at(-1)).to.equal('deploy/monitoring/postgres');
      const added = await cluster.add(render('deploy/monitoring/postgres'), secretsIn(dir));
      expect(added).to.deep.equal(['postgres-exporter']);
      await cluster.waitReady(added, 3 * 60_000);
      const { ip, port } = cluster.service('postgres-exporter-metrics', 9187);
      // Scraped from the node, as Prometheus in the monitoring namespace would.
      const metrics = await waitFor(async () => {
        const text = await (await fetch(`http://${ip}:${port}/metrics`)).text();
        return /^pg_up 1$/m.test(text) && text;
      }, 'pg_up 1 on the exporter', 90_000, SLOWLY);
      expect(metrics).to.match(/^pg_stat_database_\w+\{[^}]*datname="tock"/m);
      const role = await podman(['exec', cluster.execTarget('postgres'), 'psql', '-U', 'tock', '-d', 'tock', '-tAc',
        "SELECT rolsuper, pg_has_role('tock_monitor', 'pg_monitor', 'member'), (SELECT count(*) FROM information_schema.role_table_grants WHERE grantee = 'tock_monitor') FROM pg_roles WHERE rolname = 'tock_monitor'"]);
      expect(role.trim(), 'not a superuser, in pg_monitor, no table granted').to.equal('f|t|0');
      // Its only flow out is PostgreSQL (pg_up above); Tock's pods do not reach it.
      const tcp = async (from: string, host: string, p: number) =>
        (await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'exec', cluster.execTarget(from), 'timeout', '5', 'bash', '-c', `exec 3<>/dev/tcp/${host}/${p} && echo connected`], 30_000)).out;
      expect(await tcp('postgres-exporter', cluster.service('nats', 4222).ip, 4222)).to.include('Connection refused');
      expect(await connectFrom('gateway', ip, port)).to.equal('ECONNREFUSED');
      expect(cluster.probeRestarts()).to.deep.equal([]);
    });
  });
});
