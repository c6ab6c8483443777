import { expect } from 'chai';
import { join } from 'node:path';
import { loadConfig } from '../../shared/config.ts';
import { build, containersOf, expectRoute, named, ofKind, OVERLAYS, podSpec, readManifests, SERVICES, type Doc, type Obj } from './k8sManifests.ts';

/** deploy/k8s: what the dev, production and postgres overlays change, and where the event store and the logs keep their data. */

describe('deploy manifests (deploy/k8s)', () => {
  const { base, baseConfig } = readManifests();

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
