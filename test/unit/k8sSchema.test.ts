import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { readdirSync, statSync } from 'node:fs';
import { loadAll } from 'js-yaml';

/**
 * Every manifest kustomize renders from deploy/ is checked against the Kubernetes API's own
 * schemas (the OpenAPI definitions packaged by kubernetes-models, and the Prometheus Operator's
 * for ServiceMonitor), as a cluster would check it on apply: a wrong type, a value out of its
 * enumeration or a missing required field fails here instead of at `kubectl apply`. (Unknown
 * fields pass: the packaged schemas allow them; kubectl's strict field validation catches those.)
 */
const ROOT = join(import.meta.dirname, '..', '..');
const DEPLOY = join(ROOT, 'deploy');

type Obj = Record<string, any>;

function kustomizations(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return kustomizations(path);
    return name === 'kustomization.yaml' ? [dirname(path)] : [];
  });
}

/** The module of a kind's model: core `v1` kinds live under `v1/`, the others under their group. */
function modelPath(apiVersion: string, kind: string): string {
  if (apiVersion.startsWith('monitoring.coreos.com/')) return `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`;
  return `kubernetes-models/${apiVersion}/${kind}`;
}

async function validate(doc: Obj): Promise<void> {
  const module = (await import(modelPath(doc.apiVersion, doc.kind))) as Record<string, new (o: Obj) => { validate(): void }>;
  const Model = module[doc.kind] ?? module.default;
  if (!Model) throw new Error(`no schema for ${doc.apiVersion} ${doc.kind}`);
  new Model(doc).validate();
}

describe('deploy manifests against the Kubernetes schemas', function () {
  this.timeout(120_000);
  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (kubectl.error) {
    it.skip('needs kubectl (kustomize renders the manifests); not installed here');
    return;
  }

  for (const dir of kustomizations(DEPLOY)) {
    it(`${relative(ROOT, dir)}: every rendered object is valid`, async () => {
      const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      expect(run.status, run.stderr).to.equal(0);
      const docs = loadAll(run.stdout).filter((d): d is Obj => !!d && typeof d === 'object');
      expect(docs).to.not.be.empty;
      for (const doc of docs) {
        try {
          await validate(doc);
        } catch (error) {
          throw new Error(`${doc.kind}/${doc.metadata?.name}: ${(error as Error).message}`);
        }
      }
    });
  }

  it('refuses what a cluster would refuse (the check is not empty)', async () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'two', selector: {}, template: {} } };
    let refused: unknown = null;
    await validate(deployment).catch((e: unknown) => (refused = e));
    expect(refused, 'a string replica count').to.be.instanceOf(Error);
    const noSelector = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { template: {} } };
    refused = null;
    await validate(noSelector).catch((e: unknown) => (refused = e));
    expect(refused, 'a Deployment without its required selector').to.be.instanceOf(Error);
  });
});
