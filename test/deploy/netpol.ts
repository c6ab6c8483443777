/**
 * NetworkPolicies as nftables rules, one ruleset per pod, loaded in the pod's network namespace
 * (as Calico and Cilium enforce them per endpoint). A pod selected by a policy of a direction is
 * isolated in that direction: only what some rule of those policies allows gets through, and a
 * flow needs both the sender's egress and the receiver's ingress. Replies of allowed connections
 * pass (conntrack), and so does the node (the kubelet's probes), which NetworkPolicy does not filter.
 */
import { type Obj, portNumber, type PodSpec, selects } from './kubelet.ts';

export interface PodAddress {
  pod: PodSpec;
  ip: string;
}

type Direction = 'Ingress' | 'Egress';

const typesOf = (policy: Obj): Direction[] => policy.spec.policyTypes ?? (policy.spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);

/** The addresses a peer stands for: pods of this namespace by selector, or an ipBlock. Other namespaces hold no pod here. */
function peerMatches(peer: Obj, pods: PodAddress[], field: 'saddr' | 'daddr'): string[] {
  if (peer.ipBlock) {
    const except: string[] = peer.ipBlock.except ?? [];
    return [`ip ${field} ${peer.ipBlock.cidr}${except.length ? ` ip ${field} != { ${except.join(', ')} }` : ''}`];
  }
  if (peer.namespaceSelector) return [];
  const ips = pods.filter((p) => selects(peer.podSelector ?? {}, p.pod.labels)).map((p) => p.ip);
  return ips.length ? [`ip ${field} { ${ips.join(', ')} }`] : [];
}

/** Port matches of a rule; a named port is looked up on `named` (the pod the traffic goes to). */
function portMatches(rule: Obj, named: PodSpec | undefined): string[] {
  if (!rule.ports?.length) return [''];
  return rule.ports.map((p: Obj) => {
    const proto = String(p.protocol ?? 'TCP').toLowerCase();
    if (p.port === undefined) return ` meta l4proto ${proto}`;
    const port = typeof p.port === 'number' ? p.port : named && portNumber(named, p.port);
    if (port === undefined) throw new Error(`named port "${p.port}" in an egress rule is not supported by this runner`);
    return ` ${proto} dport ${p.endPort ? `${port}-${p.endPort}` : port}`;
  });
}

function rulesFor(self: PodAddress, policies: Obj[], pods: PodAddress[], direction: Direction): string[] | null {
  const applying = policies.filter((p) => selects(p.spec.podSelector, self.pod.labels) && typesOf(p).includes(direction));
  if (!applying.length) return null;
  const lines: string[] = [];
  for (const policy of applying) {
    const rules: Obj[] = (direction === 'Ingress' ? policy.spec.ingress : policy.spec.egress) ?? [];
    for (const rule of rules) {
      const peers: Obj[] | undefined = direction === 'Ingress' ? rule.from : rule.to;
      const addrs = peers === undefined ? [''] : peers.flatMap((peer) => peerMatches(peer, pods, direction === 'Ingress' ? 'saddr' : 'daddr'));
      const ports = portMatches(rule, direction === 'Ingress' ? self.pod : undefined);
      for (const a of addrs) for (const p of ports) lines.push(`${a}${p} accept`.trim());
    }
  }
  return lines;
}

/** The ruleset for one pod (table inet tock_netpol), `nodes` being the addresses probes come from. */
export function podRuleset(self: PodAddress, policies: Obj[], pods: PodAddress[], nodes: string[]): string {
  const chain = (name: string, hook: string, direction: Direction, own: string) => {
    const rules = rulesFor(self, policies, pods, direction);
    const body = [
      `type filter hook ${hook} priority 0; policy accept;`,
      'ct state established,related accept',
      `${own} lo accept`,
      ...(direction === 'Ingress' && nodes.length ? [`ip saddr { ${nodes.join(', ')} } accept`] : []),
      ...(rules === null ? [] : [...rules, 'meta l4proto tcp reject with tcp reset', 'reject']),
    ];
    return `  chain ${name} {\n${body.map((l) => `    ${l}\n`).join('')}  }\n`;
  };
  return `table inet tock_netpol {\n${chain('ingress', 'input', 'Ingress', 'iif')}${chain('egress', 'output', 'Egress', 'oif')}}\n`;
}
