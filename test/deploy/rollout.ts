/**
 * Exactly once while pods are replaced (an executor rollout, an upgrade): a job runs every second
 * meanwhile, and every second of the window must reach the target once and be in cron_logs once.
 */
import type { Api } from './harness.ts';
import type { Peer } from './peers.ts';
import { sleep, SLOWLY, waitFor } from '../support/waitFor.ts';

export interface Tally {
  first: number;
  last: number;
  /** Seconds of the window the target was not called for, or called more than once for. */
  lost: number[];
  doubled: number[];
  /** The same in cron_logs. */
  loggedLost: number[];
  loggedDoubled: number[];
}

/** Each second of [first, last] against the scheduled times the target saw and cron_logs lists. */
export function tally(called: number[], logged: number[], first: number, last: number): Tally {
  const count = (times: number[]) => {
    const n = new Map<number, number>();
    for (const t of times) if (t >= first && t <= last) n.set(t, (n.get(t) ?? 0) + 1);
    return n;
  };
  const c = count(called);
  const l = count(logged);
  const seconds = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  return {
    first,
    last,
    lost: seconds.filter((s) => !c.has(s)),
    doubled: seconds.filter((s) => c.get(s)! > 1),
    loggedLost: seconds.filter((s) => !l.has(s)),
    loggedDoubled: seconds.filter((s) => l.get(s)! > 1),
  };
}

export interface RollStep {
  workload: string;
  /** Every replica stopped before any new one starts. */
  together: boolean;
}

/**
 * The rolling order of the newest release in UPGRADING.md: its first "### Order" list, items
 * `N. **<service>**` naming a Deployment (or its plural); "all replicas at once" in an item makes
 * that step stop every replica first.
 */
export function upgradeOrder(markdown: string, deployments: string[]): RollStep[] {
  const section = /^### Order\n([\s\S]*?)(?=^##)/m.exec(markdown)?.[1];
  if (!section) throw new Error('UPGRADING.md has no "### Order" section');
  return section
    .split(/^(?=\d+\. )/m)
    .filter((item) => /^\d+\. /.test(item))
    .map((item) => {
      const name = /^\d+\. \*\*([-a-z]+)\*\*/.exec(item)?.[1];
      const workload = deployments.find((d) => name === d || name === `${d}s`);
      if (!workload) throw new Error(`UPGRADING.md's order names "${name}", which is no Deployment (${deployments.join(', ')})`);
      return { workload, together: /all replicas at once/.test(item.replace(/\s+/g, ' ')) };
    });
}

/**
 * Runs `during` while a job calls `<target>/<path>` every second, from its first call until a few
 * seconds after `during` ends. A run handed back by a stopping executor comes late: the calls are
 * awaited up to a minute before anything counts as lost. The job is disabled afterwards.
 */
export async function exactlyOnceDuring(api: Api, target: Peer, path: string, during: () => Promise<void>): Promise<Tally> {
  const job = await api('cron_add', { url: `${target.url}${path}`, expression: '* * * * * *', name: path });
  const called = async () => (await target.received()).filter((r) => r.url === path).map((r) => Number(r.headers['x-tock-scheduled-time']));
  await waitFor(async () => (await called()).length > 0, `the first call of ${path}`, 90_000, SLOWLY);
  const first = Math.ceil(Date.now() / 1000) + 1;
  await during();
  const ended = Date.now();
  const last = Math.floor(ended / 1000) + 3;
  // A run held by an executor that was killed comes back after the executors' ack wait (5 s):
  // a second call of it must have arrived before anything is counted.
  await sleep(Math.max((last + 2) * 1000, ended + 10_000) - Date.now());
  const complete = async (times: () => Promise<number[]>) => {
    let seen: number[] = [];
    await waitFor(async () => tally((seen = await times()), [], first, last).lost.length === 0, 'every second of the window', 60_000, SLOWLY).catch(() => undefined);
    return seen;
  };
  const calls = await complete(called);
  await api('cron_disable', { id: job.id });
  const logged = await complete(async () => ((await api('cron_logs', { id: job.id, limit: 1000 })) as Array<{ result: { time: number } }>).map((l) => l.result.time));
  return tally(calls, logged, first, last);
}
