/**
 * The restore drill of docs/backup-restore.md, performed: distributed Tock on PostgreSQL and NATS
 * runs jobs whose requests carry secrets; pg_dump while it runs; the database is lost; pg_restore
 * into a fresh database, the logs durable reset as the page says, and jobs, logs and planner
 * started on it with the same key (executors and gateway keep running, as they hold no data).
 * Every job and its sealed secrets come back, the planner resumes from the restored watermark,
 * and no occurrence runs twice. Then the same data with another key: runs fail, saying which key
 * sealed their secrets, and nothing is called without them.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf } from '../../shared/crypto/envelope.ts';
import { AdminService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { apiClient, ok } from '../support/api.ts';
import { startNatsWithUsers, type NatsUser } from '../support/natsServer.ts';
import { dropSchema, POSTGRES_URL, rawClient, requirePostgres, schemaName, urlWithSchema } from '../support/postgres.ts';
import { credentialsOf, distributedEnv, SERVICE_READY, startService, TEST_SECRET_KEY, type DistributedEnv, type ServiceProcess } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { sleep, waitFor } from '../support/waitFor.ts';
import { withoutRunFields } from '../support/jobFixtures.ts';

const JOBS = 3;
const TOOLS = ['pg_dump', 'pg_restore', 'psql'];
const READY: Partial<Record<string, RegExp>> = SERVICE_READY;
const secretOf = (i: number) => `drill-key-${i}-f3a9`;
const passwordOf = (i: number) => `drill-pass-${i}-77c1`;

describe('restore drill: pg_dump of a running Tock, restored into a fresh database with its key', function () {
  this.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-drill-'));
  const schema = schemaName('tock_drill');
  const database = schemaName('tock_restored');
  const running = new Map<string, ServiceProcess>();
  let nats: Awaited<ReturnType<typeof startNatsWithUsers>>;
  let env: DistributedEnv;

  const start = async (name: string, extra: Record<string, string> = {}) => {
    const user = name === 'gateway' ? {} : nats.envOf(name as NatsUser);
    running.set(name, await startService(name, { ...env, ...user, ...extra }, READY[name]!, 90_000));
  };
  const kill = async (name: string, signal: NodeJS.Signals = 'SIGKILL') => {
    await running.get(name)?.kill(signal);
    running.delete(name);
  };

  before(async function () {
    await requirePostgres.call(this);
    const missing = TOOLS.filter((tool) => !['/usr/bin', '/usr/local/bin'].some((dir) => existsSync(join(dir, tool))));
    if (missing.length) {
      if (process.env.CI) throw new Error(`cannot run under CI: no ${missing.join(', ')}`);
      console.log(`      (skipped: no ${missing.join(', ')}; apt-get install postgresql-client)`);
      this.skip();
    }
    nats = await startNatsWithUsers();
    env = await distributedEnv(dataDir, { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', EVENTSTORE_URL: urlWithSchema(schema) });
    await Promise.all(['jobs', 'logs', 'executor'].map((name) => start(name)));
    await Promise.all(['planner', 'gateway'].map((name) => start(name)));
  });

  after(async () => {
    for (const name of [...running.keys()]) await kill(name);
    await nats?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await Promise.all([dropSchema(schema), dropSchema(`${schema}_logs`)]).catch(() => undefined);
    const db = await rawClient();
    await db.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).finally(() => db.end());
  });

  it('brings back every job and its secrets, resumes planning from the watermark, runs nothing twice; another key fails clearly', async () => {
    const target = await startTarget();
    try {
      const admin = createClient(AdminService, env.ADMIN_ADDR, credentialsOf(env, 'admin'));
      const { token } = await admin.createAccount({ name: 'drill', timezone: 'UTC', jobLimit: 0 }).finally(() => admin.close());
      const api = apiClient(`http://127.0.0.1:${env.PORT}`, token);
      const data = Array.from({ length: JOBS }, (_, i) => ({ url: `${target.url}/j/${i}`, expression: '* * * * * *', name: `drill ${i}`, httpHeaders: `X-Drill-Key: ${secretOf(i)}`, username: `user${i}`, password: passwordOf(i) }));
      const jobs = await ok<{ id: number }[]>(api.call('cron_batch_add', { data }));
      const before = settingsOf(await ok<Record<string, unknown>[]>(api.call('cron_list', {})));
      expect(before.map((j) => [j.httpHeaders, j.hasPassword]), 'secrets masked, and there').to.deep.equal(data.map(() => ['X-Drill-Key: ***', true]));
      const first = Math.ceil(Date.now() / 1000) + 1;

      // The backup, taken while everything runs; the runs go on after it, as they would.
      const dump = join(dataDir, 'tock.dump');
      await waitFor(() => calledAt(target.received).some((c) => c.scheduled >= first + 1), 'the jobs to run', 30_000);
      execFileSync('pg_dump', ['--format=custom', `--schema=${schema}`, `--schema=${schema}_logs`, `--file=${dump}`, POSTGRES_URL]);
      await sleep(2000);

      // The loss: the services that hold the database die with it.
      const lostAt = Date.now();
      for (const name of ['jobs', 'planner', 'logs']) await kill(name);
      await Promise.all([dropSchema(schema), dropSchema(`${schema}_logs`)]);

      // The restore, into a fresh database; the logs read model replays the executions it lacks.
      const db = await rawClient();
      try {
        await db.query(`CREATE DATABASE "${database}"`);
      } finally {
        await db.end();
      }
      const restored = new URL(POSTGRES_URL);
      restored.pathname = `/${database}`;
      execFileSync('pg_restore', ['--no-owner', `--dbname=${restored}`, dump]);
      execFileSync('psql', ['--quiet', `--dbname=${restored}`, '-c', `DELETE FROM "${schema}_logs".meta WHERE key = 'durable'`]);
      const watermark = Number(execFileSync('psql', ['-At', `--dbname=${restored}`, '-c', `SELECT max((data->>'at')::bigint) FROM "${schema}".events WHERE stream = 'planner-watermark'`], { encoding: 'utf8' }).trim());
      env = { ...env, EVENTSTORE_URL: urlWithSchema(schema, restored.toString()) };
      // An outage long enough that the planner's lead cannot cover it: runs of it are owed after the restore.
      await sleep(lostAt + 4000 - Date.now());
      await Promise.all(['jobs', 'logs', 'planner'].map((name) => start(name)));
      const backAt = Date.now();

      // The planner picked up the backup's watermark and owed the runs after it.
      const started = JSON.parse(running.get('planner')!.output.join('').split('\n').find((line) => line.includes('"planner started"'))!);
      expect(started.watermark, 'the planner resumed from the restored watermark').to.equal(watermark);
      expect(started.catchUpRuns, 'runs owed since the watermark').to.be.greaterThan(0);
      const last = Math.floor(backAt / 1000) + 3;
      await waitFor(() => calledAt(target.received).filter((c) => c.scheduled === last).length === JOBS, 'every job to run after the restore', 30_000);

      // Every job back, as it was answered before the loss (secrets masked alike).
      expect(settingsOf(await ok<Record<string, unknown>[]>(api.call('cron_list', {})))).to.deep.equal(before);
      const calls = calledAt(target.received);
      for (const [i, job] of jobs.entries()) {
        const mine = calls.filter((c) => c.url === `/j/${i}`);
        const instants = mine.map((c) => c.scheduled);
        expect(instants.length, `job ${job.id}: no occurrence called twice`).to.equal(new Set(instants).size);
        // Runs planned before the loss were all made; those of the outage were owed and made
        // (late, one by one within the misfire window); every one after the restore too.
        for (let t = first; t <= last; t++) if (t * 1000 < lostAt || t * 1000 > backAt) expect(instants, `job ${job.id} at ${t}`).to.include(t);
        expect(mine.some((c) => c.scheduled * 1000 > lostAt + 2000 && c.scheduled * 1000 < backAt), `job ${job.id}: a run owed from the outage`).to.equal(true);
        // The secrets opened with the restored data and the same key.
        for (const c of mine.filter((c) => c.at > backAt)) {
          expect(c.headers['x-drill-key']).to.equal(secretOf(i));
          expect(c.headers.authorization).to.equal(`Basic ${Buffer.from(`user${i}:${passwordOf(i)}`).toString('base64')}`);
        }
        // cron_logs holds every call, those after the backup included (replayed from EXECUTIONS).
        const logged = await waitFor(async () => {
          const list = await ok<{ result: { time: number } }[]>(api.call('cron_logs', { id: job.id, limit: 1000 }));
          const times = [...new Set(list.map((l) => l.result.time))].filter((t) => t >= first && t <= last).sort();
          return times.length >= instants.filter((t) => t >= first && t <= last).length && times;
        }, `cron_logs of job ${job.id}`, 20_000).catch(async (error) => {
          const list = await ok<{ result: { time: number } }[]>(api.call('cron_logs', { id: job.id, limit: 1000 }));
          throw new Error(`${error.message}: logged ${JSON.stringify(list.map((l) => l.result.time).sort())}, called ${JSON.stringify(instants)}, first ${first} last ${last} lostAt ${lostAt} backAt ${backAt}\n${running.get('logs')!.output.join('').slice(-3000)}`);
        });
        expect(logged).to.deep.equal(instants.filter((t) => t >= first && t <= last).sort());
      }

      console.log(`      ${calls.length} calls of ${JOBS} jobs, none twice; planning resumed from a watermark ${backAt - watermark} ms old, after an outage of ${backAt - lostAt} ms`);

      // Another key: the executors cannot open the restored secrets. Runs fail, naming the key that sealed them; no call goes out.
      await kill('executor', 'SIGTERM');
      await start('executor', { TOCK_SECRET_KEY: Buffer.alloc(32, 9).toString('base64') });
      const wrongFrom = Math.ceil(Date.now() / 1000) + 3;
      const failure = await waitFor(async () => {
        const list = await ok<{ result: { time: number; error: string; status: number } }[]>(api.call('cron_logs', { id: jobs[0]!.id, limit: 5 }));
        return list.find((l) => l.result.time >= wrongFrom);
      }, 'a run under the other key', 20_000);
      expect(failure.result.error).to.equal(`job secrets: secret sealed with key ${keyIdOf(Buffer.from(TEST_SECRET_KEY, 'base64'))}, which this service does not have`);
      expect(calledAt(target.received).filter((c) => c.scheduled >= wrongFrom), 'calls made without their secrets').to.deep.equal([]);
    } finally {
      await target.close();
    }
  });
});

/** The target's record as calls: path, scheduled second, arrival, headers. */
function calledAt(received: { url: string; at: number; headers: Record<string, string | string[] | undefined> }[]) {
  return received.map((r) => ({ url: r.url, at: r.at, scheduled: Number(r.headers['x-tock-scheduled-time']), headers: r.headers }));
}

/** Job records without what changes as they run (health additions, next run): what a restore must bring back as it was. */
function settingsOf(records: Record<string, unknown>[]) {
  return records.map(withoutRunFields);
}
