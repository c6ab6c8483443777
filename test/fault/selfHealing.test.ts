import Database from 'better-sqlite3';
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, ok } from '../support/api.ts';
import { grpcHealthClient, httpReady, watchProbes } from '../support/health.ts';
import { distributedEnv, freePort, runCli, startService, type DistributedEnv, type ServiceProcess, SERVICE_READY } from '../support/processes.ts';
import { runsDrained } from '../support/busDrained.ts';
import { sleep, waitFor } from '../support/waitFor.ts';
import { BUSY_TIMEOUT_MS } from '../../shared/eventStore/sqliteEventStore.ts';
import { CONSUMERS } from '../../shared/topology.ts';
import { startTargetProcess } from '../support/targetProcess.ts';
import { capture } from '../support/capture.ts';
import { natsServer } from '../support/natsServer.ts';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const JOBS = 20;
// A probe slower than this counts as a failure (as a kubelet's default-ish timeout: this machine is
// shared, a busy moment is not an outage).
const PROBE_TIMEOUT_MS = 3000;
// Each outage outlasts what a service rides out without noticing: the bus one a run's ack wait
// (so held runs are redelivered), the store one SQLite's busy timeout (so writes fail, not wait);
// both also a failed probe, so readiness is seen false.
const BUS_OUTAGE_MS = CONSUMERS.executors.ackWaitMs + 2 * PROBE_TIMEOUT_MS;
const STORE_OUTAGE_MS = BUSY_TIMEOUT_MS + 2 * PROBE_TIMEOUT_MS;
const READY: Partial<Record<string, RegExp>> = SERVICE_READY;

describe('self-healing: the bus and then the event store go away under load, every service comes back by itself', function () {
  this.timeout(180_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-heal-'));
  const natsDir = mkdtempSync(join(tmpdir(), 'tock-heal-nats-'));
  const running = new Map<string, ServiceProcess>();
  let nats: ReturnType<typeof natsServer>;
  let env: DistributedEnv;
  let opsPort: number;

  before(async function () {
    if (!existsSync(NATS_SERVER)) {
      console.log(`      (skipped: no nats-server at ${NATS_SERVER}; the test starts and stops one of its own)`);
      this.skip();
    }
    nats = natsServer(await freePort(), natsDir, NATS_SERVER);
    await nats.start();
    opsPort = await freePort();
    env = await distributedEnv(dataDir, { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', LOG_LEVEL: 'info' });
    const start = async (name: string, extra: Record<string, string> = {}) => {
      const ready = READY[name];
      if (!ready) throw new Error(`no readiness line known for ${name}`);
      running.set(name, await startService(name, { ...env, ...extra }, ready, 60_000));
    };
    await Promise.all([start('jobs'), start('logs'), start('executor', { OPS_PORT: String(opsPort) })]);
    await start('planner');
    await start('gateway');
  });

  after(async () => {
    // TOCK_FAULT_LOGS=<dir> keeps every service's output for a look after the run.
    const keep = process.env.TOCK_FAULT_LOGS;
    if (keep) for (const [name, p] of running) writeFileSync(join(keep, `${name}.log`), p.output.join(''));
    for (const p of running.values()) await p.kill('SIGKILL');
    await nats?.kill();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(natsDir, { recursive: true, force: true });
  });

  it('runs every occurrence once (late, not lost), and readiness goes false during each outage and true after it', async () => {
    const target = await startTargetProcess();
    const health = {
      jobs: grpcHealthClient(env.JOBS_ADDR),
      planner: grpcHealthClient(env.PLANNER_ADDR),
      logs: grpcHealthClient(env.LOGS_ADDR),
    };
    const probes = watchProbes({
      jobs: () => health.jobs.serving('', PROBE_TIMEOUT_MS),
      planner: () => health.planner.serving('', PROBE_TIMEOUT_MS),
      logs: () => health.logs.serving('', PROBE_TIMEOUT_MS),
      executor: () => httpReady(`http://127.0.0.1:${opsPort}/readyz`, PROBE_TIMEOUT_MS),
    });
    try {
      const created = await runCli(['account', 'create', '--name', 'heal'], env);
      expect(created.code, created.stderr).to.equal(0);
      const api = apiClient(`http://127.0.0.1:${env.PORT}`, capture(/token: ([A-Za-z0-9]{32})/, created.stdout));
      const added = await ok<{ id: number }[]>(api.call('cron_batch_add', { data: Array.from({ length: JOBS }, (_, i) => ({ url: `${target.url}/j/${i}`, expression: '* * * * * *' })) }));
      const first = Math.ceil(Date.now() / 1000) + 2;
      const allReady = () =>
        waitFor(async () => Object.values(probes.history).every((h) => h.at(-1)?.ready), 'every service ready', 60_000).catch((error) => {
          const services = [...running.entries()].map(([k, p]) => `--- ${k}\n${p.output.join('').split('\n').slice(-15).join('\n')}`).join('\n');
          throw new Error(`${error.message}: ${JSON.stringify(probes.history)}\n${services}`);
        });
      await allReady();
      await sleep(Math.max(0, (first + 3) * 1000 - Date.now()));

      // 1. The bus: NATS dies (no goodbye) and comes back later on the same port and store.
      const busDown = Date.now();
      await nats.kill();
      await sleep(BUS_OUTAGE_MS);
      await nats.start();
      const busUp = Date.now();
      await allReady();
      const busRecoveredMs = Date.now() - busUp;

      // 2. The event store: another connection holds the SQLite file's write lock.
      const locker = new Database(join(dataDir, 'events.db'), { timeout: 5000 });
      locker.exec('BEGIN EXCLUSIVE');
      const storeDown = Date.now();
      await sleep(STORE_OUTAGE_MS);
      locker.exec('COMMIT');
      locker.close();
      const storeUp = Date.now();
      await allReady();
      const storeRecoveredMs = Date.now() - storeUp;

      const last = Math.floor(Date.now() / 1000) + 2;
      await sleep((last + 1) * 1000 - Date.now());
      const key = (a: { url: string; scheduled: string }) => `${a.url}@${a.scheduled}`;
      let arrivals = await target.arrivals();
      const inWindow = () => arrivals.filter((a) => a.url.startsWith('/j/') && Number(a.scheduled) >= first && Number(a.scheduled) <= last);
      const expected = JOBS * (last - first + 1);
      await waitFor(async () => {
        arrivals = await target.arrivals();
        return new Set(inWindow().map(key)).size >= expected;
      }, 'every occurrence to arrive', 30_000).catch((error) => {
        const services = [...running.entries()].map(([k, p]) => `--- ${k}\n${p.output.join('').split('\n').slice(-10).join('\n')}`).join('\n');
        throw new Error(`${error.message}: ${new Set(inWindow().map(key)).size} of ${expected}\n${services}`);
      });
      // No job left to plan and no run left on the bus: no duplicate can still be on its way.
      await ok(api.call('cron_batch_delete', { id: added.map((j) => j.id) }));
      await runsDrained(nats.url);
      arrivals = await target.arrivals();
      const calls = inWindow();
      const perOccurrence = new Map<string, number>();
      for (const a of calls) perOccurrence.set(key(a), (perOccurrence.get(key(a)) ?? 0) + 1);
      const runIds = new Set(calls.map((a) => a.runId));
      const doubled = [...perOccurrence].filter(([, n]) => n > 1).map(([k]) => k);
      const lateness = calls.map((a) => a.at - Number(a.scheduled) * 1000).sort((a, b) => a - b);
      const late = (from: number, to: number) => calls.filter((a) => Number(a.scheduled) * 1000 >= from && Number(a.scheduled) * 1000 < to).map((a) => a.at - Number(a.scheduled) * 1000);
      const max = (xs: number[]) => (xs.length ? Math.max(...xs) : 0);
      const transitions = Object.entries(probes.history)
        .map(([name, h]) => `${name}: ${h.map((e) => `${e.ready ? 'up' : 'down'}@${((e.at - busDown) / 1000).toFixed(1)}s`).join(' ')}`)
        .join('\n        ');
      console.log(`      ${calls.length} calls for ${expected} occurrences (${last - first + 1} s x ${JOBS} jobs), ${runIds.size} run ids, ${doubled.length} doubled`);
      console.log(`      lateness ms: p50 ${lateness[Math.floor(lateness.length / 2)]}, max ${max(lateness)}; max during the bus outage ${max(late(busDown, busUp))}, during the store lock ${max(late(storeDown, storeUp))}`);
      console.log(`      all ready again ${busRecoveredMs} ms after NATS came back, ${storeRecoveredMs} ms after the lock was released`);
      console.log(`      readiness (seconds from the bus outage; store lock from ${((storeDown - busDown) / 1000).toFixed(1)}s to ${((storeUp - busDown) / 1000).toFixed(1)}s):\n        ${transitions}`);

      if (doubled.length) {
        const byKey = new Map<string, number[]>();
        for (const a of calls) if (perOccurrence.get(key(a))! > 1) byKey.set(key(a), [...(byKey.get(key(a)) ?? []), a.at]);
        const rel = (t: number) => ((t - busDown) / 1000).toFixed(0);
        const summary = new Map<string, number>();
        for (const [k, ats] of byKey) {
          const s = `sched ${rel(Number(k.split('@')[1]) * 1000)}s calls ${ats.map(rel).join('/')}`;
          summary.set(s, (summary.get(s) ?? 0) + 1);
        }
        console.log(`      doubled (seconds from the bus outage): ${JSON.stringify([...summary].slice(0, 60))}`);
      }
      expect(perOccurrence.size, 'occurrences run').to.equal(expected);
      expect(doubled, 'occurrences run more than once').to.deep.equal([]);
      expect(runIds.size, 'one run id per call').to.equal(calls.length);
      for (const name of ['jobs', 'planner', 'logs', 'executor']) {
        expect(probes.wentDownAndUp(name, busDown, busUp + 1000), `${name}: unready while NATS was down, ready after`).to.equal(true);
      }
      for (const name of ['jobs', 'planner']) {
        expect(probes.wentDownAndUp(name, storeDown, storeUp + 1000), `${name}: unready while the store was locked, ready after`).to.equal(true);
      }
    } finally {
      await probes.stop();
      for (const client of Object.values(health)) client.close();
      await target.stop();
    }
  });
});
