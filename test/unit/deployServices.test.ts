import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../shared/config.ts';
import { build, containersOf, named, ofKind, OPERATOR_SECRETS, podSpec, readManifests, rel, ROOT, selects, SERVICES, workloads, type Obj } from './k8sManifests.ts';

/** deploy/k8s: a Deployment per service, and which ConfigMaps, Secrets and NATS users each gets. */

describe('deploy manifests (deploy/k8s)', () => {
  const { base, baseConfig, overlayDirs } = readManifests();

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
        expect(command, `${name} command`).to.deep.equal(['node', '--max-semi-space-size=64', '--heap-growing-percent=100', `dist/services/${name}/main.js`]);
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
});
