/**
 * The distributed deployment of a chaos run, every part its own process on loopback: a private
 * PostgreSQL, a private nats-server with deploy/k8s/base/nats.conf's users, two replicas of jobs,
 * planner and logs, two executors, a notifier and a gateway. Each service reaches NATS and
 * PostgreSQL through a link of its own (proxyProcess.ts) that the nemesis can cut.
 */
import { fork } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startNatsWithUsers, type NatsUser } from '../support/natsServer.ts';
import { startPrivatePostgres } from '../support/privatePostgres.ts';
import { distributedEnv, freePort, SERVICE_READY, startService, type DistributedEnv, type ServiceProcess } from '../support/processes.ts';

export const INSTANCES = ['jobs-1', 'jobs-2', 'logs-1', 'logs-2', 'executor-1', 'executor-2', 'notifier-1', 'planner-1', 'planner-2', 'gateway-1'] as const;
export type Instance = (typeof INSTANCES)[number];
const serviceOf = (instance: string) => instance.replace(/-\d+$/, '') as keyof typeof SERVICE_READY;
/** Which links each service has: the gateway talks only gRPC, the executor needs no database. */
export const linksOf = (instance: string): ('nats' | 'postgres')[] =>
  serviceOf(instance) === 'gateway' ? [] : serviceOf(instance) === 'executor' ? ['nats'] : ['nats', 'postgres'];

export const STORE_SCHEMA = 'chaos';
const LOGS_SCHEMA = 'chaos_logs';

type Postgres = Awaited<ReturnType<typeof startPrivatePostgres>>;
type Nats = Awaited<ReturnType<typeof startNatsWithUsers>>;

/** The proxy process: opens links, blocks and heals them. */
function startProxies() {
  const child = fork('test/chaos/proxyProcess.ts', [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const waiting = new Map<string | number, (m: any) => void>();
  child.on('message', (m: any) => waiting.get(m.opened ?? m.id)?.(m));
  const ask = <T>(key: string | number, message: object) =>
    new Promise<T>((resolve) => {
      waiting.set(key, (m) => (waiting.delete(key), resolve(m)));
      child.send(message);
    });
  return {
    open: async (name: string, upstreamPort: number) => (await ask<{ port: number }>(name, { open: name, upstreamPort })).port,
    block: (name: string) => ask(++next, { block: name, id: next }),
    heal: (name: string) => ask(++next, { heal: name, id: next }),
    stop: () => child.kill('SIGTERM'),
  };
}

export async function startCluster(logDir: string) {
  mkdirSync(logDir, { recursive: true });
  const postgres: Postgres = await startPrivatePostgres();
  const nats: Nats = await startNatsWithUsers();
  const natsPort = Number(new URL(nats.url).port);
  const proxies = startProxies();
  const base: DistributedEnv = await distributedEnv(join(logDir, 'data'), {
    TOCK_ALLOW_NETWORKS: '127.0.0.0/8',
    TOCK_NOTIFY_WINDOW_MS: '3000',
    TOCK_NOTIFY_RETRY_MS: '1000',
  });
  const notifierPort = await freePort();
  Object.assign(base, { NOTIFIER_GRPC_PORT: String(notifierPort), NOTIFIER_ADDR: `127.0.0.1:${notifierPort}` });
  // The second replicas listen on ports of their own; the gateway talks to the first ones.
  const own: Record<string, Record<string, string>> = {};
  for (const [instance, keys] of [['jobs-2', ['JOBS_GRPC_PORT', 'ADMIN_GRPC_PORT']], ['logs-2', ['LOGS_GRPC_PORT']], ['planner-2', ['PLANNER_GRPC_PORT']]] as const) {
    own[instance] = {};
    for (const key of keys) own[instance][key] = String(await freePort());
  }
  const envs = new Map<string, Record<string, string>>();
  for (const instance of INSTANCES) {
    const service = serviceOf(instance);
    const env: Record<string, string> = { ...base, ...own[instance], TOCK_SERVER_NAME: instance };
    if (service !== 'gateway') Object.assign(env, nats.envOf(service as NatsUser));
    for (const link of linksOf(instance)) {
      const port = await proxies.open(`${instance}|${link}`, link === 'nats' ? natsPort : postgres.port);
      if (link === 'nats') env.NATS_URL = `nats://127.0.0.1:${port}`;
      else {
        env.EVENTSTORE_URL = `postgres://postgres@127.0.0.1:${port}/postgres?schema=${STORE_SCHEMA}`;
        env.LOGS_DB_URL = `postgres://postgres@127.0.0.1:${port}/postgres?schema=${LOGS_SCHEMA}`;
      }
    }
    envs.set(instance, env);
  }

  const running = new Map<string, ServiceProcess>();
  const files = new Map<string, WriteStream>();
  /** Starts (or restarts) an instance; its output goes to <logDir>/<instance>.log. */
  const start = async (instance: string) => {
    const file = files.get(instance) ?? createWriteStream(join(logDir, `${instance}.log`), { flags: 'a' });
    files.set(instance, file);
    file.write(`\n=== start ${new Date().toISOString()}\n`);
    for (;;) {
      try {
        const proc = await startService(serviceOf(instance), envs.get(instance)!, SERVICE_READY[serviceOf(instance)], 120_000);
        file.write(proc.output.join(''));
        proc.output.length = 0;
        // startService keeps the output in memory for its readiness check only: from here, the file.
        const keep = (chunk: Buffer) => file.write(chunk);
        proc.child.stdout!.on('data', keep);
        proc.child.stderr!.on('data', keep);
        for (const stream of [proc.child.stdout!, proc.child.stderr!]) stream.on('data', () => (proc.output.length = 0));
        running.set(instance, proc);
        return;
      } catch (error) {
        file.write(`=== did not start: ${(error as Error).message.slice(0, 2000)}\n`);
      }
    }
  };
  const signal = (instance: string, sig: NodeJS.Signals) => running.get(instance)?.child.kill(sig);

  // Jobs, logs and the executors first (the planner and the gateway want them), a few at a time.
  for (const wave of [['jobs-1', 'logs-1', 'executor-1'], ['jobs-2', 'logs-2', 'executor-2'], ['notifier-1', 'planner-1'], ['planner-2', 'gateway-1']]) {
    await Promise.all(wave.map(start));
  }

  return {
    env: envs.get('jobs-1')!,
    gatewayUrl: `http://127.0.0.1:${base.PORT}`,
    postgres,
    nats,
    proxies,
    running,
    start,
    async kill(instance: string) {
      await running.get(instance)?.kill('SIGKILL');
      running.delete(instance);
      files.get(instance)?.write(`\n=== kill -9 ${new Date().toISOString()}\n`);
    },
    stop: (instance: string) => signal(instance, 'SIGSTOP'),
    resume: (instance: string) => signal(instance, 'SIGCONT'),
    /** A read-only connection to the private server (the checker's view of the event store). */
    async query<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        return (await client.query<T>(sql)).rows;
      } finally {
        await client.end();
      }
    },
    async close() {
      for (const p of running.values()) {
        p.child.kill('SIGCONT');
        await p.kill('SIGKILL');
      }
      proxies.stop();
      // nats-server's own account of the run (slow consumers, authorization errors, restarts).
      writeFileSync(join(logDir, 'nats-server.log'), nats.log());
      await nats.stop();
      postgres.destroy();
      for (const f of files.values()) f.end();
    },
  };
}

export type Cluster = Awaited<ReturnType<typeof startCluster>>;
