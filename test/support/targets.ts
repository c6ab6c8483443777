import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminService, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient, type ServiceClient } from '../../shared/grpc/bridge.ts';
import { apiClient, type ApiClient } from './api.ts';
import { startTestSystem, TEST_TOKEN } from './embedded.ts';
import { privateNats } from './natsServer.ts';
import { credentialsOf, distributedEnv, startedTogether, startService, type DistributedEnv, type ServiceProcess } from './processes.ts';

export type JobsClient = ServiceClient<(typeof JobsService)['method']>;
export type AdminClient = ServiceClient<(typeof AdminService)['method']>;

/** A running Tock, in either run mode, as the API tests see it. */
export interface ApiTarget {
  mode: 'embedded' | 'distributed';
  baseUrl: string;
  dataDir: string;
  /** The first account (token TEST_TOKEN). */
  api: ApiClient;
  /** The gateway's way in. */
  jobs: JobsClient;
  /** The operator's way in (what the CLI uses). */
  admin: AdminClient;
  /** A fresh account; its client. */
  newAccount(options?: { name?: string; timezone?: string; jobLimit?: number }): Promise<ApiClient & { accountId: number }>;
  stop(): Promise<void>;
}

let accounts = 0;
const makeNewAccount = (admin: AdminClient, baseUrl: string) => async (options: { name?: string; timezone?: string; jobLimit?: number } = {}) => {
  const { account, token } = await admin.createAccount({ name: options.name ?? `acct${++accounts}`, timezone: options.timezone ?? 'UTC', jobLimit: options.jobLimit ?? 0 });
  return Object.assign(apiClient(baseUrl, token), { accountId: Number(account!.id) });
};

export async function embeddedTarget(env: Record<string, string> = {}): Promise<ApiTarget & { system: Awaited<ReturnType<typeof startTestSystem>> }> {
  const system = await startTestSystem({ env });
  return {
    mode: 'embedded',
    system,
    baseUrl: system.baseUrl,
    dataDir: system.dataDir,
    api: system.api,
    jobs: system.jobsClient,
    admin: system.adminClient,
    newAccount: makeNewAccount(system.adminClient, system.baseUrl),
    stop: () => system.destroy(),
  };
}

/**
 * Distributed mode: the jobs service and the gateway as their own processes (as deployed), one
 * data dir. No NATS: the API needs none, and a durable consumer on the shared server could hand
 * this jobs service another test's execution outcomes for job ids that exist here too.
 */
export async function distributedTarget(): Promise<ApiTarget & { env: DistributedEnv; procs: ServiceProcess[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-api-dist-'));
  // The logs service too (on a NATS of its own): job records carry their health from it, as in
  // any deployment.
  const nats = await privateNats();
  const env = await distributedEnv(dataDir, { NATS_URL: nats.url });
  const procs: ServiceProcess[] = [];
  const stopAll = async () => {
    for (const p of procs.reverse()) await p.kill();
    await nats.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await startedTogether(procs, [startService('jobs', env, /jobs service listening/), startService('logs', env, /logs service listening/)]);
    procs.push(await startService('gateway', env, /gateway listening/));
  } catch (error) {
    await stopAll();
    throw error;
  }
  const jobs = createClient(JobsService, env.JOBS_ADDR, credentialsOf(env));
  const admin = createClient(AdminService, env.ADMIN_ADDR, credentialsOf(env, 'admin'));
  await admin.createAccount({ name: 'first', timezone: 'UTC', token: TEST_TOKEN, jobLimit: 0 });
  const baseUrl = `http://127.0.0.1:${env.PORT}`;
  return {
    mode: 'distributed',
    env,
    procs,
    baseUrl,
    dataDir,
    api: apiClient(baseUrl, TEST_TOKEN),
    jobs,
    admin,
    newAccount: makeNewAccount(admin, baseUrl),
    async stop() {
      jobs.close();
      admin.close();
      await stopAll();
    },
  };
}

/** Events that execution outcomes add to a job's stream on their own time (not answers to a request). */
export const OUTCOME_TYPES = ['FailureCounted', 'FailuresReset', 'JobAutoDisabled', 'JobStopped'];

/**
 * Where the API's part of the event store stands (job, group, account and id streams, outcomes
 * aside; the planner's watermark ticks on its own): a failed request must leave both unchanged.
 */
export function storeMark(dataDir: string): { count: number; position: number } {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true, fileMustExist: true });
  try {
    const sql = `SELECT COUNT(*) AS count, COALESCE(MAX(position), 0) AS position FROM events
      WHERE category IN ('cronjob', 'group', 'account', 'ids') AND type NOT IN (${OUTCOME_TYPES.map(() => '?').join(', ')})`;
    const row = db.prepare(sql).get(...OUTCOME_TYPES) as { count: number; position: number };
    return { count: row.count, position: row.position };
  } finally {
    db.close();
  }
}

/** The events of one stream as stored (type, data, metadata, time). */
export function streamEvents(dataDir: string, stream: string): { type: string; data: any; metadata: any; time: number; revision: number }[] {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT type, data, metadata, time, revision FROM events WHERE stream = ? ORDER BY revision').all(stream) as any[];
    return rows.map((r) => ({ ...r, data: JSON.parse(r.data), metadata: JSON.parse(r.metadata) }));
  } finally {
    db.close();
  }
}

/** Runs a suite body once per run mode, each against its own target. */
export function inBothModes(title: string, body: (target: () => ApiTarget) => void) {
  for (const [mode, start] of [
    ['embedded', () => embeddedTarget()],
    ['distributed', () => distributedTarget()],
  ] as const) {
    describe(`${title} (${mode} mode)`, function () {
      this.timeout(60_000);
      let target: ApiTarget;
      before(async () => {
        target = await start();
      });
      after(async () => {
        await target?.stop();
      });
      body(() => target);
    });
  }
}
