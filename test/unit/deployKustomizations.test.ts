import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BASE, containersOf, kustomizationOf, named, OVERLAYS, parse, parse2, patchEntries, patchPath, rel, readManifests, resourcesOf, workloads, type Obj } from './k8sManifests.ts';

/** deploy/k8s: the YAML files and the kustomizations that build them. */

describe('deploy manifests (deploy/k8s)', () => {
  const { files, kustomizationDirs, base } = readManifests();

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
});
