import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { apiClient, ok } from '../support/api.ts';
import { capture } from '../support/capture.ts';
import { grpcHealthClient, httpReady, watchProbes } from '../support/health.ts';
import { natsServer } from '../support/natsServer.ts';
import { privatePostgresMissing, startPrivatePostgres } from '../support/privatePostgres.ts';
import { distributedEnv, freePort, runCli, startService, type DistributedEnv, type ServiceProcess, SERVICE_READY } from '../support/processes.ts';
import { runsDrained } from '../support/busDrained.ts';
import { sleep, waitFor } from '../support/waitFor.ts';
import { RECONNECT_MAX_MS } from '../../shared/eventStore/postgresSubscription.ts';
import { startTargetProcess } from '../support/targetProcess.ts';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const JOBS = 5;
// The outage outlasts the store subscriptions' longest wait between reconnect attempts, so they
// are seen to fail and to come back, plus a failed probe or two, so readiness is seen false.
const OUTAGE_MS = RECONNECT_MAX_MS + 5000;
const READY: Partial<Record<string, RegExp>> = SERVICE_READY;

describe('self-healing: PostgreSQL (event store and logs) restarts under load, every service comes back by itself', function () {
  this.timeout(150_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-pgheal-'));
  const natsDir = mkdtempSync(join(tmpdir(), 'tock-pgheal-nats-'));
  const running = new Map<string, ServiceProcess>();
  let postgres: Awaited<ReturnType<typeof startPrivatePostgres>> | undefined;
  let nats: ReturnType<typeof natsServer> | undefined;
  let env: DistributedEnv;
  const ops = { executor: 0, notifier: 0 };

  before(async function () {
    const missing = privatePostgresMissing() ?? (existsSync(NATS_SERVER) ? undefined : `no nats-server at ${NATS_SERVER}`);
    if (missing) {
      // The test starts and stops servers of its own; CI installs both, so there a gap is a failure.
      if (process.env.CI) throw new Error(`cannot run under CI: ${missing}`);
      console.log(`      (skipped: ${missing}; the test runs a PostgreSQL and a nats-server of its own)`);
      this.skip();
    }
    postgres = await startPrivatePostgres();
    nats = natsServer(await freePort(), natsDir, NATS_SERVER);
    await nats.start();
    const [notifierPort, executorOps, notifierOps] = await Promise.all([freePort(), freePort(), freePort()]);
    ops.executor = executorOps;
    ops.notifier = notifierOps;
    env = await distributedEnv(dataDir, {
      // Not the default port: other suites on this machine may hold it.
      NOTIFIER_GRPC_PORT: String(notifierPort),
      NOTIFIER_ADDR: `127.0.0.1:${notifierPort}`,
      NATS_URL: nats.url,
      EVENTSTORE_URL: `${postgres.url}?schema=tock`,
      LOGS_DB_URL: `${postgres.url}?schema=tock_logs`,
      TOCK_ALLOW_NETWORKS: '127.0.0.0/8',
      LOG_LEVEL: 'info',
    });
    const start = async (name: string, extra: Record<string, string> = {}) => {
      running.set(name, await startService(name, { ...env, ...extra }, READY[name]!, 60_000));
    };
    await Promise.all([start('jobs'), start('logs'), start('executor', { OPS_PORT: String(ops.executor) })]);
    await Promise.all([start('planner'), start('notifier', { OPS_PORT: String(ops.notifier) })]);
    await start('gateway');
  });

  after(async () => {
    // TOCK_FAULT_LOGS=<dir> keeps every service's output for a look after the run.
    const keep = process.env.TOCK_FAULT_LOGS;
    if (keep) for (const [name, p] of running) writeFileSync(join(keep, `${name}.log`), p.output.join(''));
    for (const p of running.values()) await p.kill('SIGKILL');
    await nats?.kill();
    postgres?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(natsDir, { recursive: true, force: true });
  });

  it('answers 503 + Retry-After during the outage, is unready then ready again without a restart, and runs and logs every occurrence once', async () => {
    const target = await startTargetProcess();
    const health = { jobs: grpcHealthClient(env.JOBS_ADDR), planner: grpcHealthClient(env.PLANNER_ADDR), logs: grpcHealthClient(env.LOGS_ADDR) };
    const probes = watchProbes({
      jobs: () => health.jobs.serving('', 3000),
      planner: () => health.planner.serving('', 3000),
      logs: () => health.logs.serving('', 3000),
      executor: () => httpReady(`http://127.0.0.1:${ops.executor}/readyz`, 3000),
      notifier: () => httpReady(`http://127.0.0.1:${ops.notifier}/readyz`, 3000),
      gateway: () => httpReady(`http://127.0.0.1:${env.PORT}/readyz`, 3000),
    });
    const tail = () => [...running.entries()].map(([k, p]) => `--- ${k}\n${p.output.join('').split('\n').slice(-12).join('\n')}`).join('\n');
    const allReady = (what: string) =>
      waitFor(async () => Object.values(probes.history).every((h) => h.at(-1)?.ready), what, 40_000).catch((error) => {
        throw new Error(`${error.message}: ${JSON.stringify(probes.history)}\n${tail()}`);
      });
    const pids = new Map([...running].map(([name, p]) => [name, p.child.pid]));
    const logsDb = new pg.Client({ connectionString: postgres!.url });
    try {
      const created = await runCli(['account', 'create', '--name', 'pgheal'], env);
      expect(created.code, created.stderr).to.equal(0);
      const api = apiClient(`http://127.0.0.1:${env.PORT}`, capture(/token: ([A-Za-z0-9]{32})/, created.stdout));
      const added = await ok<{ id: number }[]>(api.call('cron_batch_add', { data: Array.from({ length: JOBS }, (_, i) => ({ url: `${target.url}/j/${i}`, expression: '* * * * * *' })) }));
      const first = Math.ceil(Date.now() / 1000) + 2;
      await allReady('every service ready before the outage');
      await sleep(Math.max(0, (first + 2) * 1000 - Date.now()));

      // The outage: PostgreSQL stops (fast: sessions cut), for OUTAGE_MS.
      const down = Date.now();
      postgres!.stop();
      await sleep(3000); // the probes' period plus a failed store probe
      const timed = async (call: ReturnType<typeof api.call>) => {
        const started = Date.now();
        return { ...(await call), ms: Date.now() - started };
      };
      const during = {
        add: await timed(api.call('cron_add', { url: `${target.url}/late`, expression: 'manual' })),
        edit: await timed(api.call('cron_edit', { id: added[0]!.id, name: 'renamed in the outage' })),
        logs: await timed(api.call('cron_logs', { id: added[0]!.id })),
        list: await timed(api.call('cron_list', {})),
      };
      await sleep(Math.max(0, down + OUTAGE_MS - Date.now()));
      const unreadyDuring = Object.fromEntries(Object.entries(probes.history).map(([name, h]) => [name, h.some((e) => !e.ready && e.at >= down)]));
      postgres!.start();
      const up = Date.now();
      await allReady('every service ready again after PostgreSQL came back');
      const recoveredMs = Date.now() - up;

      for (const [fn, answer] of Object.entries(during)) {
        // Reads the jobs view holds in memory may still be answered; nothing fails with a 500.
        if (fn === 'list' && answer.http === 200) continue;
        expect(answer.http, `${fn} during the outage: ${answer.message}`).to.equal(503);
        expect(answer.code, fn).to.equal(1);
        expect(answer.headers.get('retry-after'), `${fn} Retry-After`).to.equal('1');
      }
      for (const [name, p] of running) {
        expect(p.child.exitCode, `${name} still running`).to.equal(null);
        expect(p.child.pid, `${name} not restarted`).to.equal(pids.get(name));
      }
      // After the outage the API works again, writes included.
      await ok(api.call('cron_edit', { id: added[0]!.id, name: 'renamed after' }));
      expect((await ok<any>(api.call('cron_get', { id: added[0]!.id }))).name).to.equal('renamed after');
      // Subscriptions resumed by themselves: the planner plans a job added now, the notifier's view
      // sees a channel added now (channel_add waits for it), and the refused add left nothing.
      await ok(api.call('cron_add', { url: `${target.url}/after`, expression: '* * * * * *' }));
      await ok(api.call('channel_add', { type: 'webhook', url: `${target.url}/hook` }));
      const listed = await ok<any[]>(api.call('cron_list', {}));
      expect(listed.map((j) => j.url)).to.not.include(`${target.url}/late`);
      await waitFor(async () => (await target.arrivals()).some((a) => a.url === '/after'), 'a run of the job added after the outage', 10_000);

      const last = Math.floor(Date.now() / 1000) + 1;
      await sleep((last + 1) * 1000 - Date.now());
      const key = (a: { url: string; scheduled: string }) => `${a.url}@${a.scheduled}`;
      const expected = JOBS * (last - first + 1);
      let calls: Awaited<ReturnType<typeof target.arrivals>> = [];
      const fetchCalls = async () => (calls = (await target.arrivals()).filter((a) => a.url.startsWith('/j/') && Number(a.scheduled) >= first && Number(a.scheduled) <= last));
      await waitFor(async () => new Set((await fetchCalls()).map(key)).size >= expected, 'every occurrence to arrive', 20_000).catch((error) => {
        throw new Error(`${error.message}: ${new Set(calls.map(key)).size} of ${expected}\n${tail()}`);
      });
      // No job left to plan and no run left on the bus: no duplicate can still be on its way.
      // Every job, the one added after the outage too: one left would keep runs on the bus.
      const everyJob = await ok<{ id: number }[]>(api.call('cron_list', {}));
      await ok(api.call('cron_batch_delete', { id: everyJob.map((j) => j.id) }));
      await runsDrained(nats!.url);
      await fetchCalls();
      const perOccurrence = new Map<string, number>();
      for (const a of calls) perOccurrence.set(key(a), (perOccurrence.get(key(a)) ?? 0) + 1);
      const doubled = [...perOccurrence].filter(([, n]) => n > 1).map(([k]) => k);

      // Every run the target received is in the logs read model once, those of the outage included.
      await logsDb.connect();
      const runIds = new Set((await target.arrivals()).filter((a) => a.url.startsWith('/j/')).map((a) => a.runId));
      let logged = new Map<string, number>();
      const missing = () => [...runIds].filter((id) => !logged.has(id));
      await waitFor(async () => {
        const rows = (await logsDb.query<{ run_id: string; n: string }>('SELECT run_id, count(*) AS n FROM tock_logs.log GROUP BY run_id')).rows;
        logged = new Map(rows.map((r) => [r.run_id, Number(r.n)]));
        return missing().length === 0;
      }, 'every run in the logs', 30_000).catch((error) => {
        throw new Error(`${error.message}: ${missing().length} of ${runIds.size} missing\n${tail()}`);
      });
      const transitions = Object.entries(probes.history)
        .map(([name, h]) => `${name}: ${h.map((e) => `${e.ready ? 'up' : 'down'}@${((e.at - down) / 1000).toFixed(1)}s`).join(' ')}`)
        .join('\n        ');
      console.log(`      ${calls.length} calls for ${expected} occurrences (${last - first + 1} s x ${JOBS} jobs), ${doubled.length} doubled; ${runIds.size} runs, all logged once`);
      console.log(`      during the outage: ${Object.entries(during).map(([fn, a]) => `${fn} ${a.http} in ${a.ms} ms`).join(', ')}; all ready ${recoveredMs} ms after PostgreSQL was back`);
      console.log(`      readiness (seconds from the stop; start at ${((up - down) / 1000).toFixed(1)}s):\n        ${transitions}`);

      expect(perOccurrence.size, 'occurrences run').to.equal(expected);
      expect(doubled, 'occurrences run more than once').to.deep.equal([]);
      expect([...logged.values()].every((n) => n === 1), 'each run logged once').to.equal(true);
      for (const name of ['jobs', 'planner', 'logs', 'notifier']) expect(unreadyDuring[name], `${name}: unready during the outage`).to.equal(true);
      // The executor needs no database: it keeps running due runs. (The gateway's readiness follows
      // whether the jobs service answers it, which it may or may not during the outage.)
      expect(unreadyDuring.executor, 'executor unready').to.equal(false);
    } finally {
      await logsDb.end().catch(() => undefined);
      await probes.stop();
      for (const client of Object.values(health)) client.close();
      await target.stop();
    }
  });
});
