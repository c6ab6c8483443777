import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, BASE, K8S, named, ofKind, parse, podSpec, readManifests, rel, ROOT, selectedBy, selects, workloads, type Doc, type Obj } from './k8sManifests.ts';

/** deploy/k8s: disruption budgets, the ServiceAccount, Pod Security and the NetworkPolicies against the flows the architecture draws. */

const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'];

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

describe('deploy manifests (deploy/k8s)', () => {
  const { base, overlayDirs } = readManifests();

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
});
