/**
 * What the deployment test's steps share: the images, the README's Secrets and commands run with
 * the kubectl shim, the renders, and API calls through the gateway Service.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadAll } from 'js-yaml';
import type { Cluster } from './cluster.ts';
import type { Obj, Store } from './kubelet.ts';
import { PODMAN, sh } from './podman.ts';
import { sleep } from '../support/waitFor.ts';
import { kubectlShim, readReadme, secretCommands, type Store as EventStore } from './readme.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const README = readReadme(join(ROOT, 'deploy/README.md'));

/** images.sh's images: manifest image -> local image (and `tock:previous`, the upgrade's starting point). */
export function buildImages(): Record<string, string> {
  const out = sh(join(ROOT, 'test/deploy/images.sh'), [], { cwd: ROOT });
  return Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ') as [string, string]));
}

/** Runs a README script with the kubectl shim first on PATH and `dir` as the shim's state; its output. */
export function runReadme(dir: string, script: string): string {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(join(dir, 'bin/kubectl'), kubectlShim('/usr/bin/kubectl', PODMAN.join(' ')), { mode: 0o755 });
  mkdirSync(join(dir, 'work'), { recursive: true });
  return sh('bash', ['-euo', 'pipefail', '-c', script], { cwd: join(dir, 'work'), env: { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, TOCK_DEPLOY_STATE: dir } });
}

/** The Secrets the shim recorded in `dir`, as the API server would hold them. */
export function secretsIn(dir: string): Store['secrets'] {
  const secrets: Store['secrets'] = new Map();
  for (const f of readdirSync(join(dir, 'secrets'))) {
    const s = JSON.parse(readFileSync(join(dir, 'secrets', f), 'utf8')) as Obj;
    secrets.set(s.metadata.name, Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), 'base64')])));
  }
  return secrets;
}

/** What `kubectl apply -k` the README's commands ran in `dir`, in order. */
export function appliedIn(dir: string): string[] {
  try {
    return readFileSync(join(dir, 'applied'), 'utf8').trim().split('\n');
  } catch {
    return [];
  }
}

/** Runs the README's Secret commands in `dir`; the Secrets and what was applied. */
export function readmeSecrets(dir: string, store: EventStore): { store: Store['secrets']; applied: string[] } {
  runReadme(dir, secretCommands(README, store));
  return { store: secretsIn(dir), applied: appliedIn(dir) };
}

/** Lets the shim's `kubectl exec deploy/<name>` (or `statefulset/<name>`) reach that workload's first ready pod. */
export function execTargets(dir: string, cluster: Cluster, workloads: string[]): void {
  mkdirSync(join(dir, 'exec'), { recursive: true });
  for (const w of workloads) writeFileSync(join(dir, 'exec', w), cluster.execTarget(w));
}

export const render = (path: string): Obj[] => (loadAll(sh('kubectl', ['kustomize', join(ROOT, path)])) as Obj[]).filter(Boolean);
export const configMaps = (docs: Obj[]) => new Map(docs.filter((d) => d.kind === 'ConfigMap').map((d) => [d.metadata.name as string, (d.data ?? {}) as Record<string, string>]));
export type Api = (fn: string, params: Obj) => Promise<any>;

/** API calls through the gateway Service (port 80) with a token, waiting out the rate limit (1 a second in tock-config). */
export const apiOf =
  (cluster: Cluster, token: () => string): Api =>
  async (fn, params) => {
    const { ip, port } = cluster.service('gateway', 80);
    for (;;) {
      const res = await fetch(`http://${ip}:${port}/api/v1/${fn}`, { method: 'POST', headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' }, body: JSON.stringify(params) });
      const body = (await res.json()) as Obj;
      // Error 12: over the rate limit (HTTP 503 with Retry-After).
      if (body.code === 12) {
        await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
        continue;
      }
      if (body.status !== 'success') throw new Error(`${fn}: ${res.status} ${JSON.stringify(body)}`);
      return body.data;
    }
  };
