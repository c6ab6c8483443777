import { expect } from 'chai';
import { loadConfig } from '../../shared/config.ts';
import { build, containersOf, expectRoute, GRPC, hostPort, named, ofKind, readManifests, rel, selectedBy, workloads, type Obj } from './k8sManifests.ts';

/** deploy/k8s: tock-config against shared/config.ts, and its addresses against Services and ports. */

describe('deploy manifests (deploy/k8s)', () => {
  const { base, baseConfig, overlayDirs } = readManifests();

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
});
