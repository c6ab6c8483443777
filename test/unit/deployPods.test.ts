import { expect } from 'chai';
import { loadConfig } from '../../shared/config.ts';
import { build, containerPort, containersOf, GRPC, isTock, named, ofKind, podSpec, readManifests, rel, selects, SERVICES, workloads, type Obj } from './k8sManifests.ts';

/** deploy/k8s: the pods: probes, resources, security contexts, volumes and shutdown. */

describe('deploy manifests (deploy/k8s)', () => {
  const { base, overlayDirs } = readManifests();

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
});
