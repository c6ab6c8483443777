/**
 * A one-node "cluster" of podman pods for the deployment test: each pod of the render gets a
 * network namespace of its own (a podman pod on a bridge of pod addresses), /etc/hosts entries
 * that resolve every Service name to the pods behind it, its NetworkPolicy rules (netpol.ts) and
 * its containers as the kubelet would run them (kubelet.ts). Probes and restarts follow probes.ts.
 */
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { envFile, type Obj, podsOf, type PodSpec, portNumber, selects, type Store, workloadsOf, type ContainerSpec } from './kubelet.ts';
import { podRuleset, type PodAddress } from './netpol.ts';
import { attempt, nftIn, podman, PODMAN, ULIMITS } from './podman.ts';
import { runProbe } from './prober.ts';
import { activeProbes, initialState, observe, type ProbeKind, type ProbeState, timing } from './probes.ts';

export const POD_NET = { name: 'tock-deploy-pods', subnet: '10.213.0.0/24', prefix: '10.213.0.', node: '10.213.0.1' };
/** "The internet": a documentation range, neither private for the policies nor refused by Tock's egress guard. */
export const INTERNET = { name: 'tock-deploy-internet', subnet: '203.0.113.0/24', prefix: '203.0.113.' };

interface Running {
  pod: PodSpec;
  ip: string;
  container: ContainerSpec;
  id: string;
  state: ProbeState;
  lastRun: Partial<Record<ProbeKind, number>>;
  startedAt: number;
  restarts: number;
  /** Restarts the test must fail on (liveness or startup probe), with the reason. */
  probeRestarts: string[];
  nextStart?: number;
}

/** One pod's stop in a rollout: how long its containers took after SIGTERM (the preStop hook included) and their exit codes. */
export interface Stop {
  pod: string;
  seconds: number;
  exitCodes: number[];
}

export class Cluster {
  readonly pods: PodAddress[] = [];
  readonly running: Running[] = [];
  /** Containers of pods a rollout replaced: their probe restarts still count. */
  private readonly retired: Running[] = [];
  readonly events: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** A process in each started pod's network namespace (its infra container), for its nftables rules. */
  private readonly netns = new Map<string, number>();

  constructor(
    readonly docs: Obj[],
    readonly store: Store,
    readonly images: Record<string, string>,
    readonly dir: string,
  ) {
    // Every pod's spec first: a missing Secret or key fails here, before anything runs.
    let n = 10;
    for (const w of workloadsOf(docs)) for (const pod of podsOf(w, store, images)) this.pods.push({ pod, ip: `${POD_NET.prefix}${n++}` });
  }

  /** Removes what an earlier run left, then makes the two networks. */
  static async networks(): Promise<void> {
    const pods = (await podman(['pod', 'ps', '-q', '--filter', 'label=tock-deploy'])).split('\n').filter(Boolean);
    for (const id of pods) await podman(['pod', 'rm', '-f', '-t', '0', id]);
    await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'rm', '-f', '-t', '0', 'tock-deploy-target', 'tock-deploy-webhook'], 60_000);
    for (const net of [POD_NET, INTERNET]) {
      await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'network', 'rm', '-f', net.name], 60_000);
      await podman(['network', 'create', '--disable-dns', '--subnet', net.subnet, net.name]);
    }
  }

  /** Service name -> the addresses of the pods it selects (what cluster DNS would answer). */
  hosts(): string[] {
    return this.docs
      .filter((d) => d.kind === 'Service')
      .flatMap((s) => this.pods.filter((p) => selects(s.spec.selector, p.pod.labels)).map((p) => `${s.metadata.name}:${p.ip}`));
  }

  /** The address and port a Service port leads to (the first pod behind it, as ClusterIP would pick one). */
  service(name: string, port: number): { ip: string; port: number } {
    const svc = this.docs.find((d) => d.kind === 'Service' && d.metadata.name === name);
    if (!svc) throw new Error(`no Service ${name}`);
    const sp = (svc.spec.ports as Obj[]).find((p) => p.port === port);
    const target = this.pods.find((p) => selects(svc.spec.selector, p.pod.labels) && this.isReady(p.pod.name)) ?? this.pods.find((p) => selects(svc.spec.selector, p.pod.labels));
    if (!sp || !target) throw new Error(`Service ${name} has no port ${port} or no pod`);
    return { ip: target.ip, port: portNumber(target.pod, sp.targetPort ?? sp.port)! };
  }

  isReady = (pod: string) => this.running.filter((r) => r.pod.name === pod).every((r) => r.state.ready) && this.running.some((r) => r.pod.name === pod);

  /** Starts the pods of these workloads (by name). */
  async start(workloads: string[]): Promise<void> {
    const hosts = this.hosts();
    for (const p of this.pods.filter((x) => workloads.includes(x.pod.workload))) await this.startPod(p, hosts);
    if (!this.timer) this.timer = setInterval(() => void this.tick(), 1000);
  }

  private async startPod(p: PodAddress, hosts: string[]): Promise<void> {
    const { pod, ip } = p;
    await podman(['pod', 'create', '--name', pod.name, '--label', 'tock-deploy', '--hostname', pod.hostname, '--network', POD_NET.name, '--ip', ip, ...hosts.flatMap((h) => ['--add-host', h])]);
    await podman(['pod', 'start', pod.name]);
    const infra = (await podman(['pod', 'inspect', '--format', '{{.InfraContainerID}}', pod.name])).trim();
    const pid = Number((await podman(['inspect', '--format', '{{.State.Pid}}', infra])).trim());
    this.netns.set(pod.name, pid);
    nftIn(pid, this.ruleset(p));
    const volDir = (name: string) => {
      const v = pod.volumes.find((x) => x.name === name)!;
      return v.claim ? join(this.dir, 'pvc', v.claim) : join(this.dir, 'pods', pod.name, name);
    };
    for (const v of pod.volumes) {
      const path = volDir(v.name);
      if (!v.claim) rmSync(path, { recursive: true, force: true });
      mkdirSync(path, { recursive: true });
      chownSync(path, v.uid, v.gid);
      chmodSync(path, v.dirMode);
      for (const f of v.files) {
        const file = join(path, f.path);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, f.content);
        chownSync(file, v.uid, v.gid);
        chmodSync(file, f.mode);
      }
    }
    for (const c of pod.containers) {
      const envPath = join(this.dir, 'pods', pod.name, `${c.name}.env`);
      mkdirSync(dirname(envPath), { recursive: true });
      writeFileSync(envPath, envFile(pod.name, c.env), { mode: 0o600 });
      const mounts = c.mounts.flatMap((m) => ['--mount', `type=bind,src=${volDir(m.volume)},dst=${m.mountPath}${m.readOnly ? ',ro=true' : ''}`]);
      const entry = c.entrypoint ? ['--entrypoint', JSON.stringify(c.entrypoint)] : [];
      const id = (
        await podman(['create', '--pod', pod.name, '--name', `${pod.name}-${c.name}`, '--env-file', envPath, '--stop-timeout', String(pod.terminationGracePeriodSeconds), ...ULIMITS, ...c.args, ...mounts, ...entry, c.image, ...c.cmd])
      ).trim();
      await podman(['start', id]);
      this.running.push({ pod, ip, container: c, id, state: initialState(!!c.probes.startup), lastRun: {}, startedAt: Date.now(), restarts: 0, probeRestarts: [] });
    }
  }

  private ruleset = (p: PodAddress) => podRuleset(p, this.docs.filter((d) => d.kind === 'NetworkPolicy'), this.pods, [POD_NET.node]);

  /**
   * Another kustomization applied to the running cluster: its pods get addresses, every running
   * pod's rules are made again from all the policies (a new one may open a flow to an old pod),
   * then its workloads start. Pods started before do not resolve its Services' names.
   */
  async add(docs: Obj[], secrets: Store['secrets']): Promise<string[]> {
    this.docs.push(...docs);
    for (const [name, data] of secrets) this.store.secrets.set(name, data);
    for (const d of docs.filter((x) => x.kind === 'ConfigMap')) this.store.configMaps.set(d.metadata.name, d.data ?? {});
    const workloads = workloadsOf(docs);
    for (const w of workloads) for (const pod of podsOf(w, this.store, this.images)) this.pods.push({ pod, ip: `${POD_NET.prefix}${10 + this.pods.length}` });
    for (const p of this.pods) {
      const pid = this.netns.get(p.pod.name);
      if (pid !== undefined) nftIn(pid, `table inet tock_netpol\ndelete table inet tock_netpol\n${this.ruleset(p)}`);
    }
    const names = workloads.map((w) => w.metadata.name as string);
    await this.start(names);
    return names;
  }

  private ticking = false;

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const states = JSON.parse(await podman(['ps', '-a', '--format', 'json'])) as Obj[];
      const now = Date.now();
      await Promise.all(this.running.map((r) => this.check(r, states.find((s) => s.Id === r.id), now)));
    } catch (e) {
      this.events.push(`tick: ${(e as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  private async check(r: Running, ps: Obj | undefined, now: number): Promise<void> {
    // Stopped by a rollout since this tick began: the kubelet no longer probes or restarts it.
    if (this.retired.includes(r)) return;
    if (ps && ps.State !== 'running') {
      if (r.nextStart === undefined) {
        // The kubelet's crash back-off: 10 s, doubling, at most 5 minutes.
        r.nextStart = now + Math.min(10_000 * 2 ** r.restarts, 300_000);
        r.state = { ...r.state, ready: false };
        this.events.push(`${r.pod.name}/${r.container.name}: exited ${ps.ExitCode} (restart ${r.restarts + 1} due)`);
      } else if (now >= r.nextStart) await this.restart(r);
      return;
    }
    const probes = r.container.probes;
    for (const kind of activeProbes(r.state, probes)) {
      const probe = probes[kind]!;
      const t = timing(probe);
      const last = r.lastRun[kind] ?? r.startedAt + t.initialDelaySeconds * 1000 - t.periodSeconds * 1000;
      if (now - last < t.periodSeconds * 1000) continue;
      r.lastRun[kind] = now;
      const ok = await runProbe({ id: r.id, ip: r.ip, pod: r.pod }, probe, t.timeoutSeconds);
      const { state, event } = observe(r.state, kind, probe, ok);
      r.state = state;
      if (event) this.events.push(`${r.pod.name}/${r.container.name}: ${kind} -> ${event}`);
      if (event === 'restart') {
        r.probeRestarts.push(`${kind} probe failed ${t.failureThreshold} times`);
        await this.restart(r);
        return;
      }
    }
    // A container without a readiness probe is ready once started.
    if (!probes.readiness && r.state.started && !r.state.ready) r.state = { ...r.state, ready: true };
  }

  private async restart(r: Running): Promise<void> {
    r.restarts += 1;
    r.nextStart = undefined;
    r.state = initialState(!!r.container.probes.startup);
    r.lastRun = {};
    r.startedAt = Date.now();
    await podman(['restart', '-t', String(r.pod.terminationGracePeriodSeconds), r.id]);
  }

  /** Waits until every pod of these workloads is ready; throws naming the pods that are not, with their last log lines. */
  waitReady = (workloads: string[], timeoutMs: number) => this.waitUntilReady((r) => workloads.includes(r.pod.workload), timeoutMs);

  private async waitUntilReady(which: (r: Running) => boolean, timeoutMs: number): Promise<void> {
    const mine = () => this.running.filter(which);
    const deadline = Date.now() + timeoutMs;
    // Three crashes in a row (the kubelet's CrashLoopBackOff) end the wait: it would not come up.
    const looping = () => mine().some((r) => !r.state.ready && r.restarts >= 3);
    while (Date.now() < deadline && !looping()) {
      if (mine().every((r) => r.state.ready)) return;
      await new Promise((res) => setTimeout(res, 1000));
    }
    const stuck = mine().filter((r) => !r.state.ready);
    const logs = await Promise.all(stuck.map(async (r) => `${r.pod.name}/${r.container.name} (restarts ${r.restarts}):\n${(await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'logs', '--tail', '15', r.id], 30_000)).out}`));
    throw new Error(`${looping() ? 'CrashLoopBackOff' : `never ready within ${timeoutMs / 1000} s`}: ${stuck.map((r) => r.pod.name).join(', ')}\n${logs.join('\n')}\nevents:\n${this.events.join('\n')}`);
  }

  probeRestarts = () => [...this.retired, ...this.running].flatMap((r) => r.probeRestarts.map((why) => `${r.pod.name}/${r.container.name}: ${why}`));

  /** The container a `kubectl exec deploy/<name>` reaches: the first ready pod's first container. */
  execTarget(workload: string): string {
    const r = this.running.find((x) => x.pod.workload === workload && x.state.ready);
    if (!r) throw new Error(`no ready pod of ${workload}`);
    return `${r.pod.name}-${r.container.name}`;
  }

  /**
   * A rollout of one workload to the pod template made with `images`, as the kubelet carries it
   * out with maxSurge 0: each pod in turn is stopped (preStop hook, SIGTERM, SIGKILL once
   * terminationGracePeriodSeconds have passed), then its replacement starts under the same name
   * and address and must become ready before the next pod goes. `together` stops every pod first,
   * then starts them all (a scale to 0 and back).
   */
  async roll(workload: string, images: Record<string, string>, opts: { together?: boolean; readyMs: number }): Promise<Stop[]> {
    const w = workloadsOf(this.docs).find((x) => x.metadata.name === workload);
    if (!w) throw new Error(`no workload ${workload}`);
    const next = podsOf(w, this.store, images);
    const olds = this.pods.filter((p) => p.pod.workload === workload);
    const stops: Stop[] = [];
    const replace = async (batch: PodAddress[]) => {
      for (const p of batch) stops.push(await this.stopPod(p));
      for (const p of batch) p.pod = next.find((n) => n.name === p.pod.name)!;
      const hosts = this.hosts();
      for (const p of batch) await this.startPod(p, hosts);
      const names = batch.map((p) => p.pod.name);
      await this.waitUntilReady((r) => names.includes(r.pod.name), opts.readyMs);
    };
    if (opts.together) await replace(olds);
    else for (const p of olds) await replace([p]);
    return stops;
  }

  /** The kubelet's termination of a pod: out of the probe loop, preStop, SIGTERM, the grace period, SIGKILL; then the pod is gone. */
  private async stopPod(p: PodAddress): Promise<Stop> {
    const mine = this.running.filter((r) => r.pod.name === p.pod.name);
    this.retired.push(...mine);
    this.running.splice(0, this.running.length, ...this.running.filter((r) => !mine.includes(r)));
    const grace = p.pod.terminationGracePeriodSeconds;
    const began = Date.now();
    await Promise.all(
      mine.map(async (r) => {
        if (r.container.preStop) await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'exec', r.id, ...r.container.preStop], grace * 1000);
        const left = Math.max(0, Math.ceil(grace - (Date.now() - began) / 1000));
        await podman(['stop', '-t', String(left), r.id], { timeoutMs: (left + 60) * 1000 });
      }),
    );
    const seconds = (Date.now() - began) / 1000;
    const exitCodes = await Promise.all(mine.map(async (r) => Number((await podman(['inspect', '--format', '{{.State.ExitCode}}', r.id])).trim())));
    this.events.push(`${p.pod.name}: stopped in ${seconds.toFixed(1)} s, exit ${exitCodes.join(',')}`);
    await podman(['pod', 'rm', '-f', '-t', '0', p.pod.name]);
    this.netns.delete(p.pod.name);
    return { pod: p.pod.name, seconds, exitCodes };
  }

  async destroy(): Promise<void> {
    clearInterval(this.timer);
    for (const p of this.pods) await attempt(PODMAN[0]!, [...PODMAN.slice(1), 'pod', 'rm', '-f', '-t', '2', p.pod.name], 120_000);
  }
}
