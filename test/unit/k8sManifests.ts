import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// js-yaml 5 has named exports only (no default export).
import { loadAll, YAML11_SCHEMA } from 'js-yaml';

/**
 * The Kubernetes manifests in deploy/k8s, read as files (no cluster, no kustomize): each
 * kustomization built as far as the deploy/k8s tests need, and the queries they check it with.
 */

// Manifests are loose JSON-like trees; a narrow type per kind would add nothing here.
export type Obj = Record<string, any>;

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const K8S = join(ROOT, 'deploy/k8s');
export const BASE = join(K8S, 'base');
export const OVERLAYS = join(K8S, 'overlays');
export const SERVICES = ['gateway', 'jobs', 'planner', 'logs', 'notifier', 'executor'] as const;
export const GRPC = [
  { addr: 'JOBS_ADDR', portVar: 'JOBS_GRPC_PORT', service: 'jobs' },
  { addr: 'PLANNER_ADDR', portVar: 'PLANNER_GRPC_PORT', service: 'planner' },
  { addr: 'LOGS_ADDR', portVar: 'LOGS_GRPC_PORT', service: 'logs' },
  { addr: 'NOTIFIER_ADDR', portVar: 'NOTIFIER_GRPC_PORT', service: 'notifier' },
] as const;
/** Secrets the operator creates (deploy/README.md says how): never in the manifests, so never committed. */
export const OPERATOR_SECRETS = ['tock-grpc-tls', 'tock-admin-token', 'tock-nats', 'tock-eventstore', 'eventstore-tls', 'tock-secret-key'];

export interface Doc {
  file: string;
  doc: Obj;
}

export const rel = (file: string) => relative(ROOT, file);

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

/** Kubernetes reads manifests with YAML 1.1 rules (`on`, `yes` are booleans), so parse them the same way. */
export function parse(file: string): Obj[] {
  return loadAll(readFileSync(file, 'utf8'), { schema: YAML11_SCHEMA, filename: file }).filter((d): d is Obj => d !== null && typeof d === 'object');
}

export const kustomizationOf = (dir: string): Obj => parse(join(dir, 'kustomization.yaml'))[0]!;

type PatchEntry = string | { path?: string; patch?: string };
export const patchEntries = (k: Obj): PatchEntry[] => [...(k.patches ?? []), ...(k.patchesStrategicMerge ?? [])];
export const patchPath = (p: PatchEntry) => (typeof p === 'string' ? p : p.path);

/**
 * The resources a kustomization directory emits before its own patches (recursively, bases
 * included), with its generated ConfigMaps (under their names, without kustomize's hash) and its
 * commonLabels on pod templates (what network policies select on).
 */
export function resourcesOf(dir: string): Doc[] {
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
export function build(dir: string): Doc[] {
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

export function parse2(text: string): Obj[] {
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

export const ofKind = (docs: Doc[], kind: string) => docs.filter((d) => d.doc.kind === kind).map((d) => d.doc);
export const named = (docs: Doc[], kind: string, name: string) => ofKind(docs, kind).find((d) => d.metadata?.name === name);
export const workloads = (docs: Doc[]) => docs.filter((d) => ['Deployment', 'StatefulSet'].includes(d.doc.kind)).map((d) => d.doc);
export const podSpec = (w: Obj): Obj => w.spec.template.spec;
export const containersOf = (w: Obj): Obj[] => podSpec(w).containers ?? [];
export const isTock = (c: Obj) => c.image === 'tock';
export const selects = (selector: Obj | undefined, labels: Obj | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);
export const selectedBy = (docs: Doc[], selector: Obj | undefined) => workloads(docs).filter((w) => selects(selector, w.spec.template.metadata?.labels));

/** A Service or probe port (number or container port name) as a container port number. */
export function containerPort(container: Obj, port: number | string): number | undefined {
  const ports: Obj[] = container.ports ?? [];
  return (typeof port === 'number' ? ports.find((p) => p.containerPort === port) : ports.find((p) => p.name === port))?.containerPort;
}

export function hostPort(address: string): { host: string; port: number } {
  const m = /^([a-z0-9.-]+):(\d+)$/.exec(address);
  expect(m, `"${address}" is host:port`).to.not.equal(null);
  return { host: m![1]!, port: Number(m![2]) };
}

/** The Service `host` exposes `port`, selects exactly one workload, and forwards to a port that container listens on. */
export function expectRoute(docs: Doc[], what: string, host: string, port: number) {
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

/** What every deploy/k8s suite reads: the YAML files, the kustomization directories, the base build, its tock-config and the overlay directories. */
export function readManifests() {
  const files = yamlFiles(K8S);
  const kustomizationDirs = files.filter((f) => /[/\\]kustomization\.ya?ml$/.test(f)).map(dirname);
  const base = resourcesOf(BASE);
  const baseConfig = named(base, 'ConfigMap', 'tock-config')?.data as Record<string, unknown> | undefined;
  const overlayDirs = existsSync(OVERLAYS) ? readdirSync(OVERLAYS).map((n) => join(OVERLAYS, n)).filter((p) => statSync(p).isDirectory()) : [];
  return { files, kustomizationDirs, base, baseConfig, overlayDirs };
}
