import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// js-yaml 5 has named exports only (no default export).
import { loadAll, YAML11_SCHEMA } from 'js-yaml';
import { loadConfig } from '../../shared/config.ts';

/**
 * Consistency of the Kubernetes manifests in deploy/k8s, read as files (no cluster, no kustomize):
 * kustomization references, service entry points, config keys against shared/config.ts, the
 * addresses in tock-config against Services, ports and selectors, probes, resources and security.
 */

// Manifests are loose JSON-like trees; a narrow type per kind would add nothing here.
 
type Obj = Record<string, any>;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const K8S = join(ROOT, 'deploy/k8s');
const BASE = join(K8S, 'base');
const OVERLAYS = join(K8S, 'overlays');
const SERVICES = ['gateway', 'jobs', 'planner', 'logs', 'notifier', 'executor'] as const;
const GRPC = [
  { addr: 'JOBS_ADDR', portVar: 'JOBS_GRPC_PORT', service: 'jobs' },
  { addr: 'PLANNER_ADDR', portVar: 'PLANNER_GRPC_PORT', service: 'planner' },
  { addr: 'LOGS_ADDR', portVar: 'LOGS_GRPC_PORT', service: 'logs' },
  { addr: 'NOTIFIER_ADDR', portVar: 'NOTIFIER_GRPC_PORT', service: 'notifier' },
] as const;
const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'];
/** Secrets the operator creates (deploy/README.md says how): never in the manifests, so never committed. */
const OPERATOR_SECRETS = ['tock-grpc-tls', 'tock-admin-token', 'tock-nats', 'tock-eventstore', 'eventstore-tls', 'tock-secret-key'];

/**
 * The flows the architecture draws, as `from->to:PROTOCOL/port`: "any" is any source, "internet"
 * 0.0.0.0/0 (minus private ranges, checked apart), "ns:<name>" a namespace.
 */
const ALL_PODS = ['gateway', 'jobs', 'planner', 'logs', 'executor', 'notifier', 'nats', 'eventstore'];
const BUS_CLIENTS = ['jobs', 'planner', 'logs', 'executor', 'notifier'];
const POD_TO_POD = [
  'gateway->jobs:TCP/50051',
  'gateway->planner:TCP/50052',
  'gateway->logs:TCP/50053',
  'gateway->notifier:TCP/50054',
  ...BUS_CLIENTS.map((s) => `${s}->nats:TCP/4222`),
  'jobs->eventstore:TCP/2113',
  'planner->eventstore:TCP/2113',
  'notifier->eventstore:TCP/2113',
];
const EXPECTED_INGRESS = ['any->gateway:TCP/8080', ...POD_TO_POD, ...ALL_PODS.map((p) => `ns:monitoring->${p}:TCP/9464`)];
const EXPECTED_EGRESS = [...POD_TO_POD, 'executor->internet:*', 'notifier->internet:*', ...ALL_PODS.flatMap((p) => [`${p}->ns:kube-system:UDP/53`, `${p}->ns:kube-system:TCP/53`])];

/** The PostgreSQL overlay draws PostgreSQL where the others draw EventStoreDB, and logs keep their read model there too. */
function expectedFlows(where: string): { ingress: string[]; egress: string[] } {
  if (!where.endsWith('overlays/postgres')) return { ingress: EXPECTED_INGRESS, egress: EXPECTED_EGRESS };
  const swap = (flows: string[]) => [
    ...flows.filter((f) => !f.includes('eventstore')).map((f) => f),
    ...flows.filter((f) => f.includes('->eventstore:TCP/2113')).map((f) => f.replace('->eventstore:TCP/2113', '->postgres:TCP/5432')),
    ...flows.filter((f) => /^(ns:monitoring|eventstore)->|^eventstore->/.test(f) && f.includes('eventstore')).map((f) => f.replaceAll('eventstore', 'postgres')),
  ];
  return { ingress: [...swap(EXPECTED_INGRESS), 'logs->postgres:TCP/5432'], egress: [...swap(EXPECTED_EGRESS), 'logs->postgres:TCP/5432'] };
}

interface Doc {
  file: string;
  doc: Obj;
}

const rel = (file: string) => relative(ROOT, file);

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

/** Kubernetes reads manifests with YAML 1.1 rules (`on`, `yes` are booleans), so parse them the same way. */
function parse(file: string): Obj[] {
  return loadAll(readFileSync(file, 'utf8'), { schema: YAML11_SCHEMA, filename: file }).filter((d): d is Obj => d !== null && typeof d === 'object');
}

const kustomizationOf = (dir: string): Obj => parse(join(dir, 'kustomization.yaml'))[0]!;

type PatchEntry = string | { path?: string; patch?: string };
const patchEntries = (k: Obj): PatchEntry[] => [...(k.patches ?? []), ...(k.patchesStrategicMerge ?? [])];
const patchPath = (p: PatchEntry) => (typeof p === 'string' ? p : p.path);

/**
 * The resources a kustomization directory emits before its own patches (recursively, bases
 * included), with its generated ConfigMaps (under their names, without kustomize's hash) and its
 * commonLabels on pod templates (what network policies select on).
 */
function resourcesOf(dir: string): Doc[] {
  const k = kustomizationOf(dir);
  const docs: Doc[] = (k.resources ?? []).flatMap((entry: string) => {
    const path = resolve(dir, entry);
    if (!existsSync(path)) return [];
    if (statSync(path).isDirectory()) return build(path);
    return parse(path).map((doc) => ({ file: path, doc }));
  });
  for (const g of k.configMapGenerator ?? []) {
    const data = Object.fromEntries((g.files ?? []).map((f: string) => [f, readFileSync(resolve(dir, f), 'utf8')]));
    docs.push({ file: join(dir, 'kustomization.yaml'), doc: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: g.name }, data } });
  }
  if (!k.commonLabels) return docs;
  return docs.map((d) =>
    ['Deployment', 'StatefulSet'].includes(d.doc.kind) ? { ...d, doc: merge(d.doc, { spec: { template: { metadata: { labels: k.commonLabels } } } }) } : d,
  );
}

/** resourcesOf plus the kustomization's strategic-merge patches (enough of kustomize for these checks). */
function build(dir: string): Doc[] {
  let docs = resourcesOf(dir);
  const k = kustomizationOf(dir);
  for (const entry of patchEntries(k)) {
    const path = patchPath(entry);
    const patches = path ? parse(resolve(dir, path)) : parse2((entry as { patch: string }).patch);
    for (const patch of patches) {
      const matches = (d: Doc) => d.doc.kind === patch.kind && d.doc.metadata?.name === patch.metadata?.name;
      if (patch.$patch === 'delete') docs = docs.filter((d) => !matches(d));
      else docs = docs.map((d) => (matches(d) ? { ...d, doc: merge(d.doc, patch) } : d));
    }
  }
  for (const { name, count } of k.replicas ?? []) {
    docs = docs.map((d) => (d.doc.metadata?.name === name && ['Deployment', 'StatefulSet'].includes(d.doc.kind) ? { ...d, doc: merge(d.doc, { spec: { replicas: count } }) } : d));
  }
  return docs;
}

function parse2(text: string): Obj[] {
  return loadAll(text, { schema: YAML11_SCHEMA }).filter((d): d is Obj => d !== null && typeof d === 'object');
}

/**
 * Strategic merge as far as these manifests need it: maps merge; lists of named items (containers,
 * env, volumes) merge by name, `$patch: delete` removing one; other lists are replaced.
 */
function merge(target: Obj, patch: Obj): Obj {
  const out: Obj = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (Array.isArray(value) && Array.isArray(out[key])) out[key] = mergeList(out[key], value);
    else out[key] = value && typeof value === 'object' && !Array.isArray(value) && out[key] && typeof out[key] === 'object' ? merge(out[key], value) : value;
  }
  return out;
}

const named_ = (x: unknown): x is Obj => !!x && typeof x === 'object' && typeof (x as Obj).name === 'string';

function mergeList(target: unknown[], patch: unknown[]): unknown[] {
  if (!patch.every(named_) || !target.every(named_)) return patch;
  const out = [...target] as Obj[];
  for (const item of patch) {
    const i = out.findIndex((t) => t.name === item.name);
    if (item.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) out[i] = merge(out[i]!, item);
    else out.push(item);
  }
  return out;
}

const ofKind = (docs: Doc[], kind: string) => docs.filter((d) => d.doc.kind === kind).map((d) => d.doc);
const named = (docs: Doc[], kind: string, name: string) => ofKind(docs, kind).find((d) => d.metadata?.name === name);
const workloads = (docs: Doc[]) => docs.filter((d) => ['Deployment', 'StatefulSet'].includes(d.doc.kind)).map((d) => d.doc);
const podSpec = (w: Obj): Obj => w.spec.template.spec;
const containersOf = (w: Obj): Obj[] => podSpec(w).containers ?? [];
const isTock = (c: Obj) => c.image === 'tock';
const selects = (selector: Obj | undefined, labels: Obj | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);
const selectedBy = (docs: Doc[], selector: Obj | undefined) => workloads(docs).filter((w) => selects(selector, w.spec.template.metadata?.labels));

/** Every flow the NetworkPolicies allow, per direction (see EXPECTED_INGRESS for the notation). */
function flowsOf(docs: Doc[]) {
  const peers = (peer: Obj): string[] => {
    if (peer.ipBlock) return [peer.ipBlock.cidr === '0.0.0.0/0' ? 'internet' : peer.ipBlock.cidr];
    if (peer.namespaceSelector) return [`ns:${peer.namespaceSelector.matchLabels?.['kubernetes.io/metadata.name'] ?? '*'}`];
    return selectedBy(docs, peer.podSelector?.matchLabels).map((w) => w.metadata.name);
  };
  const portsOf = (rule: Obj): string[] => (rule.ports ? rule.ports.map((p: Obj) => `${p.protocol ?? 'TCP'}/${p.port}`) : ['*']);
  const ingress = new Set<string>();
  const egress = new Set<string>();
  for (const p of ofKind(docs, 'NetworkPolicy')) {
    const targets = selectedBy(docs, p.spec.podSelector?.matchLabels).map((w) => w.metadata.name);
    for (const rule of p.spec.ingress ?? []) {
      const from = rule.from ? rule.from.flatMap(peers) : ['any'];
      for (const t of targets) for (const f of from) for (const port of portsOf(rule)) ingress.add(`${f}->${t}:${port}`);
    }
    for (const rule of p.spec.egress ?? []) {
      const to = rule.to ? rule.to.flatMap(peers) : ['any'];
      for (const t of targets) for (const d of to) for (const port of portsOf(rule)) egress.add(`${t}->${d}:${port}`);
    }
  }
  return { ingress, egress };
}

/** A Service or probe port (number or container port name) as a container port number. */
function containerPort(container: Obj, port: number | string): number | undefined {
  const ports: Obj[] = container.ports ?? [];
  return (typeof port === 'number' ? ports.find((p) => p.containerPort === port) : ports.find((p) => p.name === port))?.containerPort;
}

function hostPort(address: string): { host: string; port: number } {
  const m = /^([a-z0-9.-]+):(\d+)$/.exec(address);
  expect(m, `"${address}" is host:port`).to.not.equal(null);
  return { host: m![1]!, port: Number(m![2]) };
}

/** The Service `host` exposes `port`, selects exactly one workload, and forwards to a port that container listens on. */
function expectRoute(docs: Doc[], what: string, host: string, port: number) {
  const service = named(docs, 'Service', host);
  expect(service, `${what}: a Service named "${host}"`).to.be.an('object');
  const servicePort = (service!.spec.ports as Obj[]).find((p) => p.port === port);
  expect(servicePort, `${what}: Service ${host} exposes port ${port}`).to.be.an('object');
  const targets = selectedBy(docs, service!.spec.selector);
  expect(targets.map((w) => w.metadata.name), `${what}: Service ${host} selects exactly one workload`).to.have.length(1);
  const target = targets[0]!;
  const resolved = containersOf(target)
    .map((c) => containerPort(c, servicePort!.targetPort ?? servicePort!.port))
    .find((p) => p !== undefined);
  expect(resolved, `${what}: targetPort ${servicePort!.targetPort} of Service ${host} is a container port of ${target.metadata.name}`).to.be.a('number');
  return { service: service!, target, containerPort: resolved! };
}

describe('deploy manifests (deploy/k8s)', () => {
  const files = yamlFiles(K8S);
  const kustomizationDirs = files.filter((f) => /[/\\]kustomization\.ya?ml$/.test(f)).map(dirname);
  const base = resourcesOf(BASE);
  const baseConfig = named(base, 'ConfigMap', 'tock-config')?.data as Record<string, unknown> | undefined;
  const overlayDirs = existsSync(OVERLAYS) ? readdirSync(OVERLAYS).map((n) => join(OVERLAYS, n)).filter((p) => statSync(p).isDirectory()) : [];

  describe('files and kustomizations', () => {
    it('every YAML document parses and names its kind', () => {
      expect(files.length).to.be.greaterThan(0);
      for (const file of files) {
        const docs = parse(file);
        expect(docs, `${rel(file)} has documents`).to.not.be.empty;
        for (const doc of docs) expect(doc.kind, `${rel(file)}: every document has a kind`).to.be.a('string');
      }
    });

    it('has a base and the dev and production overlays', () => {
      for (const dir of [BASE, join(OVERLAYS, 'dev'), join(OVERLAYS, 'production')]) expect(kustomizationDirs, rel(dir)).to.include(dir);
    });

    it('every resources and patches entry exists (directories hold a kustomization)', () => {
      for (const dir of kustomizationDirs) {
        const k = kustomizationOf(dir);
        for (const entry of k.resources ?? []) {
          const path = resolve(dir, entry);
          expect(existsSync(path), `${rel(dir)}/kustomization.yaml resources: ${entry} exists`).to.equal(true);
          if (statSync(path).isDirectory()) expect(existsSync(join(path, 'kustomization.yaml')), `${rel(path)} has a kustomization.yaml`).to.equal(true);
        }
        for (const entry of patchEntries(k)) {
          const path = patchPath(entry);
          if (path) expect(existsSync(resolve(dir, path)), `${rel(dir)}/kustomization.yaml patches: ${path} exists`).to.equal(true);
          else expect((entry as Obj).patch, `${rel(dir)}: a patches entry has a path or an inline patch`).to.be.a('string');
        }
      }
    });

    it('every YAML file in a kustomization directory is used by it (no manifest silently left out)', () => {
      for (const dir of kustomizationDirs) {
        const k = kustomizationOf(dir);
        const generated = (k.configMapGenerator ?? []).flatMap((g: Obj) => (g.files ?? []).map((f: string) => resolve(dir, f)));
        const used = new Set<string>([join(dir, 'kustomization.yaml'), ...generated, ...(k.resources ?? []).map((e: string) => resolve(dir, e)), ...patchEntries(k).flatMap((e) => (patchPath(e) ? [resolve(dir, patchPath(e)!)] : []))]);
        for (const file of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).map((n) => join(dir, n))) expect(used.has(file), `${rel(file)} is listed in ${rel(dir)}/kustomization.yaml`).to.equal(true);
      }
    });

    it('every patch, replicas entry and images entry targets something the kustomization builds', () => {
      for (const dir of kustomizationDirs) {
        const k = kustomizationOf(dir);
        const docs = resourcesOf(dir);
        for (const entry of patchEntries(k)) {
          const patches = patchPath(entry) ? parse(resolve(dir, patchPath(entry)!)) : parse2((entry as Obj).patch);
          for (const p of patches) expect(named(docs, p.kind, p.metadata?.name), `${rel(dir)}: patch target ${p.kind}/${p.metadata?.name} exists`).to.be.an('object');
        }
        for (const { name } of k.replicas ?? []) expect(workloads(docs).map((w) => w.metadata.name), `${rel(dir)}: replicas target ${name}`).to.include(name);
        const images = workloads(docs).flatMap((w) => containersOf(w).map((c) => String(c.image).split(':')[0]));
        for (const { name } of k.images ?? []) expect(images, `${rel(dir)}: images entry ${name} is used by a container`).to.include(name);
      }
    });

    it('kubectl kustomize builds every kustomization (skipped without kubectl)', function () {
      this.timeout(60_000);
      for (const dir of kustomizationDirs) {
        const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
        if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT') {
          console.log('      (skipped: kubectl is not installed; the manifests are still checked above)');
          this.skip();
        }
        expect(run.status, `kubectl kustomize ${rel(dir)}: ${run.stderr}`).to.equal(0);
        expect(parse2(run.stdout), rel(dir)).to.not.be.empty;
      }
    });

    it('the base is namespace-agnostic, labels everything part-of tock, and sets the tock image', () => {
      const k = kustomizationOf(BASE);
      expect(k.namespace, 'no namespace in the base kustomization').to.equal(undefined);
      for (const { file, doc } of base) expect(doc.metadata?.namespace, `${rel(file)} ${doc.kind}/${doc.metadata?.name} has no namespace`).to.equal(undefined);
      expect(k.commonLabels).to.deep.equal({ 'app.kubernetes.io/part-of': 'tock' });
      expect(k.images).to.deep.include({ name: 'tock', newName: 'tock', newTag: 'latest' });
    });
  });

  describe('services', () => {
    for (const name of SERVICES) {
      it(`${name}: a Deployment runs the compiled services/${name}/main.ts (dist/) with tock-config`, () => {
        const deployment = named(base, 'Deployment', name);
        expect(deployment, `Deployment ${name}`).to.be.an('object');
        const containers = containersOf(deployment!);
        expect(containers).to.have.length(1);
        const command: string[] = [...(containers[0]!.command ?? []), ...(containers[0]!.args ?? [])];
        // The same node flags as `npm start`: a young generation big enough for bursts of runs. The
        // image holds compiled JavaScript only (no TypeScript loader): plain node on dist/.
        expect(command, `${name} command`).to.deep.equal(['node', '--max-semi-space-size=64', `dist/services/${name}/main.js`]);
        expect(containers[0]!.workingDir, `${name} workingDir`).to.equal('/app');
        expect(deployment!.spec.selector?.matchLabels, `${name} has a selector`).to.be.an('object');
        expect(selects(deployment!.spec.selector.matchLabels, deployment!.spec.template.metadata?.labels), `${name}: selector matches its pod labels`).to.equal(true);
      });

      it(`services/${name}/main.ts exists`, () => {
        expect(existsSync(join(ROOT, 'services', name, 'main.ts')), `services/${name}/main.ts`).to.equal(true);
      });
    }

    it('every Deployment reads tock-config through envFrom', () => {
      for (const deployment of ofKind(base, 'Deployment')) {
        const refs = containersOf(deployment).flatMap((c) => (c.envFrom ?? []).map((e: Obj) => e.configMapRef?.name));
        expect(refs, `Deployment ${deployment.metadata.name}`).to.include('tock-config');
      }
    });

    it('every ConfigMap and Secret a pod refers to exists in the base and in every overlay build, unless marked optional or made by the operator', () => {
      for (const [where, docs] of [['base', base], ...overlayDirs.map((dir) => [rel(dir), build(dir)] as const)] as const) {
        for (const w of workloads(docs)) {
          const pod = podSpec(w);
          for (const c of [...(pod.initContainers ?? []), ...containersOf(w)]) {
            const refs: Obj[] = [
              ...(c.envFrom ?? []).flatMap((e: Obj) => [e.configMapRef && { kind: 'ConfigMap', ...e.configMapRef }, e.secretRef && { kind: 'Secret', ...e.secretRef }].filter(Boolean)),
              ...(c.env ?? []).flatMap((e: Obj) => [e.valueFrom?.configMapKeyRef && { kind: 'ConfigMap', ...e.valueFrom.configMapKeyRef }, e.valueFrom?.secretKeyRef && { kind: 'Secret', ...e.valueFrom.secretKeyRef }].filter(Boolean)),
            ];
            for (const ref of refs) if (!ref.optional && !(ref.kind === 'Secret' && OPERATOR_SECRETS.includes(ref.name))) expect(named(docs, ref.kind, ref.name), `${where}: ${w.metadata.name}/${c.name} refers to ${ref.kind} ${ref.name}`).to.be.an('object');
          }
          for (const v of pod.volumes ?? []) {
            if (v.secret && !v.secret.optional && !OPERATOR_SECRETS.includes(v.secret.secretName)) expect(named(docs, 'Secret', v.secret.secretName), `${where}: ${w.metadata.name} volume ${v.name} Secret ${v.secret.secretName}`).to.be.an('object');
            if (v.configMap && !v.configMap.optional) expect(named(docs, 'ConfigMap', v.configMap.name), `${where}: ${w.metadata.name} volume ${v.name} ConfigMap ${v.configMap.name}`).to.be.an('object');
          }
        }
      }
    });

    it('the executor gets no Secret but its own NATS password and the key of job secrets (it runs requests that users supply)', () => {
      const executor = named(base, 'Deployment', 'executor')!;
      const refs = containersOf(executor).flatMap((c) => [
        ...(c.envFrom ?? []).filter((e: Obj) => e.secretRef).map((e: Obj) => `${e.secretRef.name}/*`),
        ...(c.env ?? []).filter((e: Obj) => e.valueFrom?.secretKeyRef).map((e: Obj) => `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`),
      ]);
      expect(refs).to.deep.equal(['tock-nats/executor']);
      expect((podSpec(executor).volumes ?? []).filter((v: Obj) => v.secret).map((v: Obj) => v.secret.secretName), 'executor mounts').to.deep.equal(['tock-secret-key']);
    });

    it('only jobs (which seals), executor (which opens) and notifier (channel secrets) get the secret key, where TOCK_SECRET_KEY_FILE points', () => {
      for (const w of [...ofKind(base, 'Deployment'), ...ofKind(base, 'StatefulSet')]) {
        const name = w.metadata.name as string;
        const volume = (podSpec(w).volumes ?? []).find((v: Obj) => v.secret?.secretName === 'tock-secret-key');
        const keyFile = containersOf(w)[0]!.env?.find((e: Obj) => e.name === 'TOCK_SECRET_KEY_FILE')?.value as string | undefined;
        if (name !== 'jobs' && name !== 'executor' && name !== 'notifier') {
          expect(volume, `${name} mounts tock-secret-key`).to.equal(undefined);
          expect(keyFile, `${name} TOCK_SECRET_KEY_FILE`).to.equal(undefined);
          continue;
        }
        const mount = containersOf(w)[0]!.volumeMounts.find((m: Obj) => m.name === volume?.name);
        expect(keyFile, name).to.equal(`${mount.mountPath}/keys`);
      }
    });

    it('each Tock service connects to NATS as its own user, with its own key of tock-nats; the gateway not at all', () => {
      for (const name of ['jobs', 'planner', 'logs', 'executor', 'notifier']) {
        const env: Obj[] = containersOf(named(base, 'Deployment', name)!)[0]!.env;
        expect(env.find((e) => e.name === 'NATS_USER')?.value, name).to.equal(name);
        expect(env.find((e) => e.name === 'NATS_PASSWORD')?.valueFrom?.secretKeyRef, name).to.deep.equal({ name: 'tock-nats', key: name });
      }
      expect(containersOf(named(base, 'Deployment', 'gateway')!)[0]!.env ?? []).to.deep.equal([]);
      const conf = named(base, 'ConfigMap', 'nats-config')!.data['nats.conf'] as string;
      const natsEnv: Obj[] = containersOf(named(base, 'StatefulSet', 'nats')!)[0]!.env;
      for (const user of ['planner', 'executor', 'jobs', 'logs', 'notifier', 'subscriber']) {
        const variable = `NATS_${user.toUpperCase()}_PASSWORD`;
        expect(conf, `nats.conf user ${user}`).to.contain(`user: "${user}"\n      password: $${variable}`);
        expect(natsEnv.find((e) => e.name === variable)?.valueFrom?.secretKeyRef, variable).to.deep.equal({ name: 'tock-nats', key: user });
      }
    });

    it('gRPC: the gateway, jobs, planner and logs mount the TLS Secret where tock-config points; only jobs gets the admin token', () => {
      const config = loadConfig(baseConfig as Record<string, string>);
      for (const name of ['gateway', 'jobs', 'planner', 'logs', 'executor']) {
        const w = named(base, 'Deployment', name)!;
        const mounts: Obj[] = containersOf(w)[0]!.volumeMounts;
        const secretOf = (mount: Obj | undefined) => (podSpec(w).volumes ?? []).find((v: Obj) => v.name === mount?.name)?.secret?.secretName;
        const tls = mounts.find((m) => config.TOCK_GRPC_TLS_CA!.startsWith(`${m.mountPath}/`));
        expect(secretOf(tls), `${name} TLS`).to.equal(name === 'executor' ? undefined : 'tock-grpc-tls');
        const admin = containersOf(w)[0]!.env?.find((e: Obj) => e.name === 'TOCK_ADMIN_TOKEN_FILE')?.value as string | undefined;
        expect(secretOf(mounts.find((m) => admin?.startsWith(`${m.mountPath}/`))), `${name} admin token`).to.equal(name === 'jobs' ? 'tock-admin-token' : undefined);
      }
      for (const s of ofKind(base, 'Service')) for (const p of s.spec.ports) expect(p.port, `Service ${s.metadata.name} exposes no admin port`).to.not.equal(config.ADMIN_GRPC_PORT);
    });

    it('deploy/README.md tells how to create every Secret the operator provides', () => {
      const readme = readFileSync(join(ROOT, 'deploy/README.md'), 'utf8');
      for (const name of OPERATOR_SECRETS) expect(readme, name).to.contain(name);
    });
  });

  describe('configuration', () => {
    it('tock-config is a ConfigMap of strings (YAML 1.1: quote numbers and booleans)', () => {
      expect(baseConfig, 'ConfigMap tock-config in the base').to.be.an('object');
      for (const [key, value] of Object.entries(baseConfig!)) expect(value, `tock-config ${key}`).to.be.a('string');
    });

    it('tock-config passes shared/config.ts validation, and every key is one it knows', () => {
      const config = loadConfig(baseConfig as Record<string, string>);
      // Unknown keys are stripped by the schema, so a misspelt key is missing from the result.
      for (const key of Object.keys(baseConfig!)) expect(Object.keys(config), `tock-config key ${key} is a configuration variable`).to.include(key);
      expect(config.GRPC_HOST).to.equal('0.0.0.0');
    });

    it('with each overlay applied, the configuration still validates', () => {
      for (const dir of overlayDirs) {
        const data = named(build(dir), 'ConfigMap', 'tock-config')?.data as Record<string, string>;
        expect(data, `${rel(dir)} builds tock-config`).to.be.an('object');
        for (const [key, value] of Object.entries(data)) expect(value, `${rel(dir)} tock-config ${key}`).to.be.a('string');
        expect(() => loadConfig(data), rel(dir)).to.not.throw();
      }
    });

    it('every container env value is a string', () => {
      for (const w of workloads(base)) for (const c of containersOf(w)) for (const e of c.env ?? []) if (!e.valueFrom) expect(e.value, `${w.metadata.name} env ${e.name}`).to.be.a('string');
    });
  });

  describe('addresses, Services and ports', () => {
    for (const { addr, portVar, service } of GRPC) {
      it(`${addr} reaches the ${service} Deployment on ${portVar}`, () => {
        const config = loadConfig(baseConfig as Record<string, string>);
        const address = baseConfig?.[addr];
        expect(address, `${addr} in tock-config`).to.be.a('string');
        const { host, port } = hostPort(address as string);
        const { target, containerPort } = expectRoute(base, addr, host, port);
        expect(target.kind).to.equal('Deployment');
        expect(target.metadata.name, `${addr} leads to the ${service} Deployment`).to.equal(service);
        expect(containerPort, `${service} listens on ${portVar}`).to.equal(config[portVar]);
      });
    }

    it('NATS_URL reaches the NATS StatefulSet; the eventstore Service the EventStoreDB one, whose URL comes from a Secret', () => {
      const url = new URL(String(baseConfig?.NATS_URL));
      const { target } = expectRoute(base, 'NATS_URL', url.hostname, Number(url.port));
      expect(target.kind).to.equal('StatefulSet');
      expect(target.metadata.name).to.equal('nats');
      expect(expectRoute(base, 'eventstore', 'eventstore', 2113).target.metadata.name).to.equal('eventstore');
      expect(baseConfig, 'ESDB_URL (with credentials) is not in the ConfigMap').to.not.have.property('ESDB_URL');
      for (const name of ['jobs', 'planner']) {
        const env: Obj[] = containersOf(named(base, 'Deployment', name)!)[0]!.env;
        expect(env.find((e) => e.name === 'ESDB_URL')?.valueFrom?.secretKeyRef, name).to.deep.equal({ name: 'tock-eventstore', key: 'url' });
      }
    });

    it('the gateway Service maps port 80 to the gateway PORT', () => {
      const { target, containerPort } = expectRoute(base, 'gateway', 'gateway', 80);
      expect(target.metadata.name).to.equal('gateway');
      expect(containerPort).to.equal(loadConfig(baseConfig as Record<string, string>).PORT);
    });

    it('the NATS Service is headless and each StatefulSet names an existing Service', () => {
      expect(named(base, 'Service', 'nats')?.spec.clusterIP).to.equal('None');
      for (const s of ofKind(base, 'StatefulSet')) expect(named(base, 'Service', s.spec.serviceName), `StatefulSet ${s.metadata.name} serviceName`).to.be.an('object');
    });

    it('every Service selects a workload', () => {
      for (const s of ofKind(base, 'Service')) expect(selectedBy(base, s.spec.selector), `Service ${s.metadata.name}`).to.not.be.empty;
    });
  });

  describe('pods', () => {
    it('every workload selector matches its own pod labels', () => {
      for (const w of workloads(base)) expect(selects(w.spec.selector?.matchLabels, w.spec.template.metadata?.labels), `${w.kind} ${w.metadata.name}`).to.equal(true);
    });

    it('every container with a port has readiness and liveness probes on one of its ports', () => {
      for (const w of workloads(base)) {
        for (const c of containersOf(w)) {
          if (!(c.ports ?? []).length) continue;
          for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
            const p = c[probe];
            if (!p && probe === 'startupProbe') continue;
            expect(p, `${w.metadata.name}/${c.name} ${probe}`).to.be.an('object');
            const port = p.httpGet?.port ?? p.tcpSocket?.port ?? p.grpc?.port;
            expect(containerPort(c, port), `${w.metadata.name}/${c.name} ${probe} port ${port}`).to.be.a('number');
          }
        }
      }
    });

    it('the gateway and the executor probe /readyz for readiness and /healthz for liveness', () => {
      for (const name of ['gateway', 'executor']) {
        const c = containersOf(named(base, 'Deployment', name)!)[0]!;
        expect(c.readinessProbe?.httpGet?.path, `${name} readiness`).to.equal('/readyz');
        expect(c.livenessProbe?.httpGet?.path, `${name} liveness`).to.equal('/healthz');
      }
      const executor = containersOf(named(base, 'Deployment', 'executor')!)[0]!;
      // Started means alive: an executor waiting for NATS at start must not be restarted for it.
      expect(executor.startupProbe?.httpGet?.path, 'executor startup').to.equal('/healthz');
      expect(containerPort(executor, executor.readinessProbe.httpGet.port), 'the executor ops port is OPS_PORT').to.equal(loadConfig({}).OPS_PORT);
      // The gateway's /metrics is on its operations port only, which its Service does not expose.
      const gateway = containersOf(named(base, 'Deployment', 'gateway')!)[0]!;
      expect(containerPort(gateway, 'ops'), 'the gateway ops port is OPS_PORT').to.equal(loadConfig({}).OPS_PORT);
      expect(named(base, 'Service', 'gateway')!.spec.ports.map((p: Obj) => p.targetPort)).to.deep.equal(['http']);
    });

    it('gRPC services are probed on their ops port (the kubelet speaks no TLS to the gRPC port): /readyz for readiness, /healthz for liveness and startup', () => {
      for (const { service } of GRPC) {
        const c = containersOf(named(base, 'Deployment', service)!)[0]!;
        expect(containerPort(c, c.readinessProbe?.httpGet?.port), `${service} ops port is OPS_PORT`).to.equal(loadConfig({}).OPS_PORT);
        expect(c.readinessProbe?.httpGet?.path, `${service} readiness`).to.equal('/readyz');
        // An outage makes a pod unready; restarting it would not bring the store or bus back.
        expect(c.livenessProbe?.httpGet?.path, `${service} liveness`).to.equal('/healthz');
        expect(c.startupProbe?.httpGet?.path, `${service} startup`).to.equal('/healthz');
      }
    });

    it('every container has CPU and memory requests and limits', () => {
      for (const w of workloads(base)) {
        for (const c of containersOf(w)) {
          for (const kind of ['requests', 'limits']) for (const r of ['cpu', 'memory']) expect(c.resources?.[kind]?.[r], `${w.metadata.name}/${c.name} resources.${kind}.${r}`).to.not.equal(undefined);
        }
      }
    });

    it('every container runs as a numeric non-root user (runAsNonRoot needs a number to verify)', () => {
      for (const w of workloads(base)) {
        const pod = podSpec(w).securityContext ?? {};
        for (const c of containersOf(w)) {
          const sc = { ...pod, ...c.securityContext };
          expect(sc.runAsNonRoot, `${w.metadata.name}/${c.name} runAsNonRoot`).to.equal(true);
          expect(sc.runAsUser, `${w.metadata.name}/${c.name} runAsUser`).to.be.a('number').and.greaterThan(0);
          expect(sc.allowPrivilegeEscalation, `${w.metadata.name}/${c.name} allowPrivilegeEscalation`).to.equal(false);
          expect(sc.capabilities?.drop, `${w.metadata.name}/${c.name} drops all capabilities`).to.include('ALL');
        }
      }
    });

    it('Tock containers: read-only root filesystem with an emptyDir on /tmp, 30 s to shut down (executors: their drain limit and a margin)', () => {
      const tock = ofKind(base, 'Deployment').filter((d) => containersOf(d).some(isTock));
      expect(tock.map((d) => d.metadata.name)).to.have.members([...SERVICES]);
      for (const d of tock) {
        if (d.metadata.name !== 'executor') expect(podSpec(d).terminationGracePeriodSeconds, `${d.metadata.name} terminationGracePeriodSeconds`).to.equal(30);
        for (const c of containersOf(d)) {
          expect(c.securityContext?.readOnlyRootFilesystem, `${d.metadata.name} readOnlyRootFilesystem`).to.equal(true);
          const tmp = (c.volumeMounts ?? []).find((m: Obj) => m.mountPath === '/tmp');
          expect(tmp, `${d.metadata.name} mounts /tmp`).to.be.an('object');
          const volume = (podSpec(d).volumes ?? []).find((v: Obj) => v.name === tmp.name);
          expect(volume?.emptyDir, `${d.metadata.name} /tmp is an emptyDir`).to.be.an('object');
        }
      }
    });

    it('executors get longer to stop than their drain limit plus a margin, in the base and every overlay (docs/operations.md)', () => {
      const MARGIN_S = 10;
      for (const [where, docs] of [['base', base] as const, ...overlayDirs.map((dir) => [rel(dir), build(dir)] as const)]) {
        const executor = named([...docs], 'Deployment', 'executor')!;
        const env = Object.fromEntries((containersOf(executor)[0]!.env ?? []).filter((e: Obj) => 'value' in e).map((e: Obj) => [e.name, e.value]));
        const config = loadConfig({ ...(named([...docs], 'ConfigMap', 'tock-config')?.data as Record<string, string>), TOCK_EXECUTOR_DRAIN_SECONDS: env.TOCK_EXECUTOR_DRAIN_SECONDS });
        expect(env.TOCK_EXECUTOR_DRAIN_SECONDS, `${where}: the executor's drain limit is set where its grace period is`).to.be.a('string');
        expect(podSpec(executor).terminationGracePeriodSeconds, `${where}: executor terminationGracePeriodSeconds`).to.be.at.least(config.TOCK_EXECUTOR_DRAIN_SECONDS + MARGIN_S);
        // Above the default job timeout (30 s) and its connect retry (up to 13 s): such calls are never cut short.
        expect(config.TOCK_EXECUTOR_DRAIN_SECONDS, `${where}: drain limit`).to.be.at.least(43);
      }
    });

    it('every volume mount names a pod volume or a volume claim template', () => {
      for (const w of workloads(base)) {
        const names = [...(podSpec(w).volumes ?? []).map((v: Obj) => v.name), ...(w.spec.volumeClaimTemplates ?? []).map((v: Obj) => v.metadata.name)];
        for (const c of containersOf(w)) for (const m of c.volumeMounts ?? []) expect(names, `${w.metadata.name}/${c.name} mount ${m.mountPath}`).to.include(m.name);
      }
    });

    it('no pod gets service-link variables (EventStoreDB refuses to start on an unknown EVENTSTORE_* one)', () => {
      for (const w of workloads(base)) expect(podSpec(w).enableServiceLinks, `${w.kind} ${w.metadata.name} enableServiceLinks`).to.equal(false);
    });

    it('NATS and EventStoreDB keep their data on PersistentVolumeClaims', () => {
      const nats = named(base, 'StatefulSet', 'nats')!;
      expect(containersOf(nats)[0]!.args).to.deep.equal(['-c', '/etc/nats/nats.conf']);
      expect(named(base, 'ConfigMap', 'nats-config')!.data['nats.conf']).to.match(/jetstream \{\s*store_dir: "\/data"\s*\}/);
      expect(containersOf(nats)[0]!.volumeMounts.map((m: Obj) => m.mountPath)).to.include.members(['/data', '/etc/nats']);
      for (const s of [nats, named(base, 'StatefulSet', 'eventstore')!]) expect(s.spec.volumeClaimTemplates, s.metadata.name).to.have.length.greaterThan(0);
      const eventstore = containersOf(named(base, 'StatefulSet', 'eventstore')!)[0]!;
      const env = Object.fromEntries(eventstore.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
      expect(env).to.include({ EVENTSTORE_RUN_PROJECTIONS: 'None', EVENTSTORE_CLUSTER_SIZE: '1' });
      // Secure mode: TLS from the eventstore-tls Secret, the admin password from tock-eventstore.
      expect(env).to.not.have.property('EVENTSTORE_INSECURE');
      expect(env.EVENTSTORE_CERTIFICATE_FILE).to.equal('/etc/eventstore/certs/tls.crt');
      expect(env.EVENTSTORE_DEFAULT_ADMIN_PASSWORD).to.deep.equal({ secretKeyRef: { name: 'tock-eventstore', key: 'admin-password' } });
      expect(eventstore.readinessProbe.httpGet.scheme).to.equal('HTTPS');
    });
  });

  describe('availability and network policy', () => {
    it('the gateway and the executor have a PodDisruptionBudget selecting their pods', () => {
      for (const name of ['gateway', 'executor']) {
        const pdb = ofKind(base, 'PodDisruptionBudget').find((p) => selectedBy(base, p.spec.selector?.matchLabels).some((w) => w.metadata.name === name));
        expect(pdb, `PodDisruptionBudget for ${name}`).to.be.an('object');
        expect(selectedBy(base, pdb!.spec.selector.matchLabels)).to.have.length(1);
      }
    });

    for (const dir of overlayDirs.filter((d) => !d.endsWith('dev'))) {
      it(`${rel(dir)}: every Deployment of more than one replica has a PodDisruptionBudget of maxUnavailable 1 and spreads over nodes`, () => {
        const docs = build(dir);
        const multi = ofKind(docs, 'Deployment').filter((w) => (w.spec.replicas ?? 1) > 1);
        expect(multi.map((w) => w.metadata.name)).to.include.members(dir.endsWith('postgres') ? ['jobs', 'planner', 'logs', 'gateway', 'executor'] : ['jobs', 'planner', 'gateway', 'executor']);
        for (const w of [...multi, named(docs, 'Deployment', 'notifier')!]) {
          const pdbs = ofKind(docs, 'PodDisruptionBudget').filter((p) => selects(p.spec.selector?.matchLabels, w.spec.template.metadata.labels));
          expect(pdbs.map((p) => p.spec.maxUnavailable), `${w.metadata.name}: PodDisruptionBudget`).to.deep.equal([1]);
          const spread: Obj[] = podSpec(w).topologySpreadConstraints ?? [];
          expect(spread.some((c) => c.topologyKey === 'kubernetes.io/hostname' && selects(c.labelSelector?.matchLabels, w.spec.template.metadata.labels)), `${w.metadata.name}: spread over nodes`).to.equal(true);
        }
      });
    }

    it('every pod runs as the ServiceAccount tock, which mounts no token', () => {
      for (const dir of [BASE, ...overlayDirs]) {
        const docs = build(dir);
        expect(named(docs, 'ServiceAccount', 'tock')?.automountServiceAccountToken, rel(dir)).to.equal(false);
        for (const w of workloads(docs)) expect([podSpec(w).serviceAccountName, podSpec(w).automountServiceAccountToken], `${rel(dir)}: ${w.metadata.name}`).to.deep.equal(['tock', false]);
      }
    });

    it('deploy/k8s/namespace.yaml enforces the restricted Pod Security Standard, and the README applies it before the Secrets', () => {
      const [ns] = parse(join(K8S, 'namespace.yaml'));
      expect(ns!.metadata.labels).to.include({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'restricted' });
      const readme = readFileSync(join(ROOT, 'deploy/README.md'), 'utf8');
      expect(readme.indexOf('kubectl apply -f deploy/k8s/namespace.yaml')).to.be.within(0, readme.indexOf('create secret generic tock-nats'));
    });

    for (const [where, docsOf] of [['base', () => base], ...overlayDirs.map((dir) => [rel(dir), () => build(dir)] as const)] as const) {
      it(`${where}: every pod is selected by a default-deny policy (both directions, no rule)`, () => {
        const docs = docsOf();
        const denies = ofKind(docs, 'NetworkPolicy').filter(
          (p) => ['Ingress', 'Egress'].every((t) => (p.spec.policyTypes ?? []).includes(t)) && !(p.spec.ingress ?? []).length && !(p.spec.egress ?? []).length,
        );
        for (const w of workloads(docs)) {
          expect(denies.some((p) => selects(p.spec.podSelector?.matchLabels, w.spec.template.metadata?.labels)), `${where}: ${w.kind} ${w.metadata.name} under default-deny`).to.equal(true);
        }
      });

      it(`${where}: the policies allow exactly the flows the architecture draws, on both ends`, () => {
        const docs = docsOf();
        const { ingress, egress } = flowsOf(docs);
        const expected = expectedFlows(where);
        expect([...ingress].sort()).to.deep.equal([...expected.ingress].sort());
        expect([...egress].sort()).to.deep.equal([...expected.egress].sort());
        // Pod to pod, a connection needs the sender's egress and the receiver's ingress.
        const pods = new Set(workloads(docs).map((w) => w.metadata.name));
        for (const flow of egress) if (pods.has(flow.split('->')[1]!.split(':')[0]!)) expect(ingress.has(flow), `${flow}: allowed out but not in`).to.equal(true);
        for (const flow of ingress) if (pods.has(flow.split('->')[0]!)) expect(egress.has(flow), `${flow}: allowed in but not out`).to.equal(true);
        const internet = ofKind(docs, 'NetworkPolicy')
          .flatMap((p) => (p.spec.egress ?? []).flatMap((r: Obj) => r.to ?? []))
          .find((peer: Obj) => peer.ipBlock?.cidr === '0.0.0.0/0');
        expect(internet.ipBlock.except).to.include.members(PRIVATE_RANGES);
      });
    }

    it('no NetworkPolicy peer pairs a pod selector with a namespace selector (commonLabels would add part-of=tock to it)', () => {
      for (const p of ofKind(base, 'NetworkPolicy')) {
        const peers: Obj[] = [...(p.spec.egress ?? []).flatMap((r: Obj) => r.to ?? []), ...(p.spec.ingress ?? []).flatMap((r: Obj) => r.from ?? [])];
        for (const peer of peers) expect(!!(peer.podSelector && peer.namespaceSelector), `NetworkPolicy ${p.metadata.name}`).to.equal(false);
      }
    });
  });

  describe('overlays', () => {
    const replicas = (docs: Doc[], name: string) => named(docs, 'Deployment', name)?.spec.replicas;

    it('dev: one replica of each service and debug logs', () => {
      const dev = build(join(OVERLAYS, 'dev'));
      for (const name of SERVICES) expect(replicas(dev, name), `dev ${name}`).to.equal(1);
      expect(named(dev, 'ConfigMap', 'tock-config')?.data.LOG_LEVEL).to.equal('debug');
    });

    it('production: replicated services, an executor autoscaler and an Ingress to the gateway', () => {
      const prod = build(join(OVERLAYS, 'production'));
      expect({ gateway: replicas(prod, 'gateway'), jobs: replicas(prod, 'jobs'), planner: replicas(prod, 'planner'), executor: replicas(prod, 'executor') }).to.deep.equal({ gateway: 2, jobs: 2, planner: 2, executor: 3 });
      const hpa = ofKind(prod, 'HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef?.name === 'executor');
      expect(hpa, 'HorizontalPodAutoscaler for the executor').to.be.an('object');
      expect(hpa!.spec.scaleTargetRef.kind).to.equal('Deployment');
      expect(hpa!.spec.metrics.map((m: Obj) => m.resource?.name)).to.include('cpu');
      expect(hpa!.spec.minReplicas).to.be.at.most(replicas(prod, 'executor'));
      const ingresses = ofKind(prod, 'Ingress');
      expect(ingresses).to.have.length.greaterThan(0);
      for (const ingress of ingresses) {
        for (const path of ingress.spec.rules.flatMap((r: Obj) => r.http.paths)) {
          const { name, port } = path.backend.service;
          const service = named(prod, 'Service', name);
          expect(service, `Ingress backend ${name}`).to.be.an('object');
          expect((service!.spec.ports as Obj[]).some((p) => p.name === port.name || p.port === port.number), `Ingress backend ${name} port`).to.equal(true);
          expect(name).to.equal('gateway');
        }
      }
    });
  });

  describe('event store and logs storage', () => {
    it('base: logs keeps its read model (and so its durable consumer name) on a PersistentVolumeClaim', () => {
      const logs = named(base, 'Deployment', 'logs')!;
      const file = String(baseConfig?.LOGS_DB_URL);
      expect(file).to.match(/^sqlite:\//);
      const mount = containersOf(logs)[0]!.volumeMounts.find((m: Obj) => file.slice('sqlite:'.length).startsWith(`${m.mountPath}/`));
      expect(mount, 'the read model file is on a mounted volume').to.be.an('object');
      const claim = (podSpec(logs).volumes as Obj[]).find((v) => v.name === mount.name)?.persistentVolumeClaim?.claimName;
      expect(named(base, 'PersistentVolumeClaim', claim), `PersistentVolumeClaim ${claim}`).to.be.an('object');
      expect(logs.spec.strategy?.type, 'one pod at a time on a ReadWriteOnce volume').to.equal('Recreate');
    });

    it('postgres: EVENTSTORE_URL reaches the PostgreSQL StatefulSet, EventStoreDB is gone, logs share the database', () => {
      const docs = build(join(OVERLAYS, 'postgres'));
      const config = loadConfig(named(docs, 'ConfigMap', 'tock-config')!.data);
      const url = new URL(config.EVENTSTORE_URL!);
      expect(url.password, 'no password in the ConfigMap').to.equal('');
      const { target } = expectRoute(docs, 'EVENTSTORE_URL', url.hostname, Number(url.port));
      expect(target.kind).to.equal('StatefulSet');
      expect(target.spec.volumeClaimTemplates).to.have.length.greaterThan(0);
      expect(named(docs, 'StatefulSet', 'eventstore')).to.equal(undefined);
      expect(config.LOGS_DB_URL, 'logs in the event store database').to.equal(undefined);
      const logs = named(docs, 'Deployment', 'logs')!;
      expect(logs.spec.replicas).to.be.greaterThan(1);
      expect((podSpec(logs).volumes as Obj[]).some((v) => v.persistentVolumeClaim)).to.equal(false);
      expect(named(docs, 'PersistentVolumeClaim', 'logs-data')).to.equal(undefined);
      // The password reaches PostgreSQL and the services that connect to it from one Secret, and never the executor.
      const password = containersOf(target)[0]!.env.find((e: Obj) => e.name === 'POSTGRES_PASSWORD');
      expect(password.valueFrom.secretKeyRef).to.include({ name: 'tock-secrets', key: 'PGPASSWORD' });
      for (const name of ['jobs', 'planner', 'logs']) {
        expect(containersOf(named(docs, 'Deployment', name)!)[0]!.envFrom.map((e: Obj) => e.secretRef?.name), name).to.include('tock-secrets');
      }
    });
  });
});
