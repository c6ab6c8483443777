import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { KubeletError, type Obj, podsOf, resolveEnv, type Store, volumeOf, workloadsOf } from '../deploy/kubelet.ts';
import { podRuleset } from '../deploy/netpol.ts';
import { initialState, observe } from '../deploy/probes.ts';
import { execCommands, exporterCommands, kubectlShim, secretCommands, shellBlocks } from '../deploy/readme.ts';

/**
 * The deployment test's translation of manifests into what the kubelet gives a container
 * (test/deploy; the running part is `npm run test:deploy`), and the rendered overlays put through it
 * with the Secrets deploy/README.md's commands create.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(join(ROOT, 'deploy/README.md'), 'utf8');
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const IMAGES = { 'tock:latest': 'tock', 'nats:2.10-alpine': 'nats', 'postgres:16': 'postgres', 'eventstore/eventstore:24.10': 'esdb' };

const store = (secrets: Record<string, Record<string, string>>, configMaps: Record<string, Record<string, string>> = {}): Store => ({
  secrets: new Map(Object.entries(secrets).map(([n, d]) => [n, Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v)]))])),
  configMaps: new Map(Object.entries(configMaps)),
});

const fails = (fn: () => unknown, reason: string, text: RegExp) => {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(KubeletError);
    expect((e as KubeletError).reason).to.equal(reason);
    expect((e as Error).message).to.match(text);
    return;
  }
  expect.fail(`expected ${reason}`);
};

/** Could uid/groups read a file the kubelet laid out (owner root, so only group and other bits count)? */
const readable = (file: { mode: number }, dir: { gid: number }, groups: number[]) => (groups.includes(dir.gid) ? (file.mode & 0o040) !== 0 : (file.mode & 0o004) !== 0);

describe('deployment test: manifests as the kubelet runs them (test/deploy)', () => {
  describe('env', () => {
    const s = store({ creds: { PGPASSWORD: 'pw', A: 'secret' }, nats: { jobs: 'n' } }, { cfg: { A: 'config', B: 'b' } });
    it('envFrom in order, env last; a secretKeyRef resolved; $(VAR) expanded', () => {
      const c = { envFrom: [{ configMapRef: { name: 'cfg' } }, { secretRef: { name: 'creds' } }], env: [{ name: 'NATS_PASSWORD', valueFrom: { secretKeyRef: { name: 'nats', key: 'jobs' } } }, { name: 'URL', value: 'x://$(B)/$$(B)' }] };
      expect(resolveEnv('p', c, s)).to.deep.equal({ A: 'secret', B: 'b', PGPASSWORD: 'pw', NATS_PASSWORD: 'n', URL: 'x://b/$(B)' });
    });
    it('a missing Secret, key or ConfigMap is CreateContainerConfigError, unless optional', () => {
      fails(() => resolveEnv('p', { envFrom: [{ secretRef: { name: 'nope' } }] }, s), 'CreateContainerConfigError', /secret "nope" not found/);
      fails(() => resolveEnv('p', { envFrom: [{ configMapRef: { name: 'nope' } }] }, s), 'CreateContainerConfigError', /configmap "nope" not found/);
      fails(() => resolveEnv('p', { env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nats', key: 'planner' } } }] }, s), 'CreateContainerConfigError', /couldn't find key planner in secret nats/);
      expect(resolveEnv('p', { envFrom: [{ secretRef: { name: 'nope', optional: true } }], env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k', optional: true } } }] }, s)).to.deep.equal({});
    });
  });

  describe('volumes', () => {
    const s = store({ key: { keys: 'k1' }, two: { a: '1', b: '2' } });
    it('a Secret with an fsGroup: group fsGroup, group read added; without one: root:root with defaultMode as given', () => {
      const v = { name: 'k', secret: { secretName: 'key', defaultMode: 0o440 } };
      const withGroup = volumeOf('p', v, 1000, s, 'p');
      expect(withGroup).to.deep.include({ uid: 0, gid: 1000 });
      expect(withGroup.files).to.deep.equal([{ path: 'keys', content: Buffer.from('k1'), mode: 0o440 }]);
      expect(readable(withGroup.files[0]!, withGroup, [1000])).to.equal(true);
      const without = volumeOf('p', v, undefined, s, 'p');
      expect(without).to.deep.include({ uid: 0, gid: 0 });
      expect(readable(without.files[0]!, without, [1000]), 'uid 1000 without fsGroup').to.equal(false);
    });
    it('items pick keys and paths; a missing Secret or key is FailedMount', () => {
      expect(volumeOf('p', { name: 'x', secret: { secretName: 'two', items: [{ key: 'b', path: 'sub/b.txt', mode: 0o400 }] } }, undefined, s, 'p').files).to.deep.equal([{ path: 'sub/b.txt', content: Buffer.from('2'), mode: 0o400 }]);
      fails(() => volumeOf('p', { name: 'x', secret: { secretName: 'gone' } }, 1000, s, 'p'), 'FailedMount', /secret "gone" not found/);
      fails(() => volumeOf('p', { name: 'x', secret: { secretName: 'two', items: [{ key: 'c', path: 'c' }] } }, 1000, s, 'p'), 'FailedMount', /couldn't find key c/);
    });
    it('emptyDir world-writable, PVC per claim (per pod for a claim template)', () => {
      expect(volumeOf('p', { name: 'tmp', emptyDir: {} }, 1000, s, 'p')).to.deep.include({ kind: 'dir', gid: 1000, dirMode: 0o2777 });
      expect(volumeOf('p', { name: 'd', persistentVolumeClaim: { claimName: 'logs-data' } }, undefined, s, 'p')).to.deep.include({ claim: 'logs-data', dirMode: 0o755 });
      expect(volumeOf('nats-0', { name: 'data', claimTemplate: true }, 1000, s, 'nats-0').claim).to.equal('data-nats-0');
    });
  });

  it('pods: replicas, user and groups, read-only root without podman\'s extra tmpfs, capabilities dropped, command as entrypoint', () => {
    const w = {
      kind: 'Deployment',
      metadata: { name: 'jobs' },
      spec: { replicas: 2, template: { metadata: { labels: { app: 'jobs' } }, spec: { securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000 }, containers: [{ name: 'jobs', image: 'tock:latest', workingDir: '/app', command: ['node', 'main.js'], args: ['--x'], securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] } } },
    };
    const pods = podsOf(w, store({}), IMAGES);
    expect(pods.map((p) => p.name)).to.deep.equal(['jobs-0', 'jobs-1']);
    const c = pods[0]!.containers[0]!;
    expect(c.args).to.deep.equal(['--user', '1000:1000', '--group-add', '2000', '--read-only', '--read-only-tmpfs=false', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--workdir', '/app']);
    expect([c.entrypoint, c.cmd]).to.deep.equal([['node', 'main.js'], ['--x']]);
  });

  it('probes: the startup probe alone until it passes; liveness failures restart; readiness flips on its thresholds', () => {
    const probe = { failureThreshold: 2 };
    let s = initialState(true);
    let r = observe(s, 'startup', probe, false);
    expect(r.event).to.equal(null);
    expect(observe(r.state, 'startup', probe, false).event).to.equal('restart');
    s = observe(r.state, 'startup', probe, true).state;
    r = observe(s, 'readiness', probe, true);
    expect([r.event, r.state.ready]).to.deep.equal(['ready', true]);
    r = observe(observe(r.state, 'readiness', probe, false).state, 'readiness', probe, false);
    expect(r.event).to.equal('unready');
    expect(observe(observe(r.state, 'liveness', probe, false).state, 'liveness', probe, false).event).to.equal('restart');
  });

  it('network policies: the executor may reach NATS and the internet minus private ranges, nothing else; jobs take gRPC from the gateway only', function () {
    if (!hasKubectl) {
      console.log('      (skipped: kubectl is not installed; it renders the overlay the policies come from)');
      this.skip();
    }
    const docs = (loadAll(spawnSync('kubectl', ['kustomize', join(ROOT, 'deploy/k8s/overlays/postgres')], { encoding: 'utf8' }).stdout) as Obj[]).filter(Boolean);
    const pods = workloadsOf(docs).flatMap((w, i) => [{ pod: { name: w.metadata.name, labels: w.spec.template.metadata.labels, containers: [] } as never, ip: `10.0.0.${i + 2}` }]);
    const ip = (name: string) => pods.find((p) => (p.pod as Obj).name === name)!.ip;
    const policies = docs.filter((d) => d.kind === 'NetworkPolicy');
    const executor = podRuleset(pods.find((p) => (p.pod as Obj).name === 'executor')!, policies, pods, ['10.0.0.1']);
    expect(executor).to.include(`ip daddr { ${ip('nats')} } tcp dport 4222 accept`);
    expect(executor).to.include('ip daddr 0.0.0.0/0 ip daddr != { 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 169.254.0.0/16, 100.64.0.0/10 } accept');
    expect(executor).to.not.include(ip('jobs'));
    expect(executor.match(/reject with tcp reset/g)).to.have.length(2);
    const jobs = podRuleset(pods.find((p) => (p.pod as Obj).name === 'jobs')!, policies, pods, ['10.0.0.1']);
    expect(jobs).to.include(`ip saddr { ${ip('gateway')} } tcp dport 50051 accept`);
    expect(jobs).to.include(`ip daddr { ${ip('postgres')} } tcp dport 5432 accept`);
  });

  describe('deploy/README.md', () => {
    it('its Secret commands: EventStoreDB\'s only without the postgres overlay, tock-secrets only with it; the account command runs in deploy/jobs; the exporter\'s role after the overlay', () => {
      expect(shellBlocks(README).length).to.be.greaterThan(5);
      expect(secretCommands(README, 'postgres')).to.include('tock-secrets').and.not.include('tock-eventstore');
      expect(secretCommands(README, 'eventstore')).to.include('tock-eventstore').and.not.include('tock-secrets');
      expect(execCommands(README, 'accounts create')).to.deep.equal(['kubectl -n tock exec deploy/jobs -- node bin/tock.js accounts create --name you']);
      // PostgreSQL's monitoring role is made in the running database: after the overlay, never with the Secrets before it.
      expect(exporterCommands(README)).to.include('IN ROLE pg_monitor').and.include('tock-postgres-monitor');
      for (const store of ['postgres', 'eventstore'] as const) expect(secretCommands(README, store)).to.not.include('tock-postgres-monitor');
    });

    for (const [overlay, kind] of [['production', 'eventstore'], ['postgres', 'postgres'], ['dev', 'eventstore']] as const) {
      it(`${overlay}: with the Secrets its commands create, every pod gets each Secret, key and ConfigMap it names, and can read every file it is pointed at (*_FILE, the gRPC TLS files where mounted)`, function () {
        if (!hasKubectl || spawnSync('openssl', ['version']).status !== 0) {
          console.log('      (skipped: kubectl and openssl are needed to render the overlay and run the README\'s certificate commands)');
          this.skip();
        }
        const dir = mkdtempSync(join(tmpdir(), 'tock-readme-'));
        try {
          mkdirSync(join(dir, 'bin'));
          mkdirSync(join(dir, 'work'));
          writeFileSync(join(dir, 'bin/kubectl'), kubectlShim(spawnSync('bash', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim(), 'false'), { mode: 0o755 });
          const r = spawnSync('bash', ['-euo', 'pipefail', '-c', secretCommands(README, kind)], { cwd: join(dir, 'work'), encoding: 'utf8', env: { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, TOCK_DEPLOY_STATE: dir } });
          expect(r.status, r.stderr).to.equal(0);
          const secrets = new Map(
            readdirSync(join(dir, 'secrets')).map((f) => {
              const s = JSON.parse(readFileSync(join(dir, 'secrets', f), 'utf8')) as Obj;
              return [s.metadata.name as string, Object.fromEntries(Object.entries(s.data as Obj).map(([k, v]) => [k, Buffer.from(String(v), 'base64')]))];
            }),
          );
          const docs = (loadAll(spawnSync('kubectl', ['kustomize', join(ROOT, 'deploy/k8s/overlays', overlay)], { encoding: 'utf8' }).stdout) as Obj[]).filter(Boolean);
          const configMaps = new Map(docs.filter((d) => d.kind === 'ConfigMap').map((d) => [d.metadata.name as string, d.data as Record<string, string>]));
          for (const w of workloadsOf(docs)) {
            for (const pod of podsOf(w, { secrets, configMaps }, IMAGES).slice(0, 1)) {
              const psc: Obj = w.spec.template.spec.securityContext ?? {};
              const groups = [psc.runAsGroup, psc.fsGroup].filter((g) => g !== undefined) as number[];
              for (const c of pod.containers) {
                for (const [name, path] of Object.entries(c.env).filter(([k, v]) => k.endsWith('_FILE') || (k.startsWith('TOCK_GRPC_TLS_') && c.mounts.some((m) => v.startsWith(`${m.mountPath}/`))))) {
                  const mount = c.mounts.find((m) => path.startsWith(`${m.mountPath}/`));
                  expect(mount, `${pod.name}: ${name}=${path} is on a volume`).to.not.equal(undefined);
                  const volume = pod.volumes.find((v) => v.name === mount!.volume)!;
                  const file = volume.files.find((f) => `${mount!.mountPath}/${f.path}` === path);
                  expect(file, `${pod.name}: ${name}=${path} exists`).to.not.equal(undefined);
                  expect(readable(file!, volume, groups), `${pod.name}: ${name}=${path} readable by its user`).to.equal(true);
                }
              }
            }
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });
});
