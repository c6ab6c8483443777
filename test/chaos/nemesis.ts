/**
 * The nemesis: faults picked at random from a seed (the same seed picks the same faults in the
 * same order; when they land depends on the machine). Two workers, so faults overlap; a target is
 * never hit by two faults at once.
 */
import type { Cluster } from './cluster.ts';
import { INSTANCES, linksOf } from './cluster.ts';
import type { Fault, FaultKind } from './history.ts';
import { sleep } from '../support/waitFor.ts';

/** mulberry32: a small, well-known seeded generator (a run is repeated by its seed). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KINDS: [FaultKind, number][] = [['kill', 4], ['pause', 3], ['partition', 3], ['nats-restart', 1], ['postgres-restart', 1]];

export function createNemesis(cluster: Cluster, random: () => number, print: (line: string) => void) {
  const faults: Fault[] = [];
  const busy = new Set<string>();
  const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo));
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;

  function choose(): { kind: FaultKind; target: string; ms: number } | null {
    let roll = random() * KINDS.reduce((n, [, w]) => n + w, 0);
    const kind = KINDS.find(([, w]) => (roll -= w) < 0)![0];
    if (kind === 'nats-restart') return busy.has('nats') ? null : { kind, target: 'nats', ms: between(1000, 6000) };
    if (kind === 'postgres-restart') return busy.has('postgres') ? null : { kind, target: 'postgres', ms: between(1000, 6000) };
    if (kind === 'partition') {
      const instance = pick(INSTANCES.filter((i) => linksOf(i).length));
      const target = `${instance}|${pick(linksOf(instance))}`;
      return busy.has(instance) || busy.has(target) ? null : { kind, target, ms: between(2000, 20_000) };
    }
    const target = pick(INSTANCES);
    if (busy.has(target)) return null;
    return { kind, target, ms: kind === 'pause' ? between(1000, 20_000) : between(200, 5000) };
  }

  async function inject(kind: FaultKind, target: string, ms: number) {
    const fault: Fault = { kind, target, startMs: Date.now(), endMs: 0 };
    // A server restart is a clean stop or a crash, at random.
    const crash = random() < 0.5;
    const how = kind === 'nats-restart' ? (crash ? ' by SIGKILL' : ' by SIGTERM') : kind === 'postgres-restart' ? (crash ? ' by stop -m immediate' : ' by stop -m fast') : '';
    print(`fault ${kind} ${target}${how} at ${new Date(fault.startMs).toISOString()} for ${ms} ms`);
    if (kind === 'kill') {
      await cluster.kill(target);
      await sleep(ms);
      await cluster.start(target);
    } else if (kind === 'pause') {
      cluster.stop(target);
      await sleep(ms);
      cluster.resume(target);
    } else if (kind === 'partition') {
      await cluster.proxies.block(target);
      await sleep(ms);
      await cluster.proxies.heal(target);
    } else if (kind === 'nats-restart') {
      await cluster.nats.halt(crash ? 'SIGKILL' : 'SIGTERM');
      await sleep(ms);
      await cluster.nats.start();
    } else {
      cluster.postgres.stop(crash ? 'immediate' : 'fast');
      await sleep(ms);
      cluster.postgres.start();
    }
    fault.endMs = Date.now();
    faults.push(fault);
  }

  async function worker(until: () => boolean) {
    while (!until()) {
      await sleep(between(2000, 10_000));
      if (until()) break;
      const choice = choose();
      if (!choice) continue;
      const lock = choice.kind === 'partition' ? [choice.target, choice.target.split('|')[0]!] : [choice.target];
      lock.forEach((k) => busy.add(k));
      try {
        await inject(choice.kind, choice.target, choice.ms);
      } finally {
        lock.forEach((k) => busy.delete(k));
      }
    }
  }

  return {
    faults,
    /** Injects faults until `until` says stop; resolves once every fault has healed. */
    run: (until: () => boolean) => Promise.all([worker(until), worker(until)]),
  };
}
