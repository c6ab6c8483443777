// Sustained executions per second, end to end (due run -> HTTP call -> execution -> logs read
// model), in embedded mode and in distributed mode on NATS, next to undici alone against the
// same target. Run: npx tsx test/bench/throughput.bench.ts [embedded jobs] [distributed jobs] [seconds]
// (default 16000 8000 10): each mode is offered a little more than it can do, so what is logged
// per second is its capacity.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { startEmbedded } from '../../services/embedded/system.ts';
import { apiClient, ok } from '../support/api.ts';
import { distributedEnv, runCli, startService, type ServiceProcess } from '../support/processes.ts';
import { startTargetProcess } from '../support/targetProcess.ts';
import { capture } from '../support/capture.ts';

const EMBEDDED_JOBS = Number(process.argv[2] ?? 16000);
const DISTRIBUTED_JOBS = Number(process.argv[3] ?? 8000);
const SECONDS = Number(process.argv[4] ?? 10);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const TOKEN = 'BenchToken0123456789abcdefghijkl';

async function rawUndici(url: string, seconds: number) {
  const agent = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (Date.now() < until) {
        await (await request(`${url}/raw`, { dispatcher: agent })).body.dump();
        done++;
      }
    }),
  );
  await agent.close();
  return done / seconds;
}

async function addJobs(api: ReturnType<typeof apiClient>, url: string, count: number) {
  for (let i = 0; i < count; i += 1000) {
    const data = Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({ url: `${url}/job/${i + j}`, expression: '* * * * * *' }));
    await ok(api.call('cron_batch_add', { data }));
  }
}

/** CPU seconds a process has used so far (utime + stime of /proc/<pid>/stat, in 1/100 s; Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Executions recorded per second over the measuring window, after a warm-up; and the cores `pids` used meanwhile. */
async function measure(count: () => Promise<number>, pids: number[] = []) {
  await new Promise((r) => setTimeout(r, 3000));
  const before = await count();
  const cpuBefore = pids.map(cpuSeconds);
  const started = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const after = await count();
  const seconds = (Date.now() - started) / 1000;
  return { rate: (after - before) / seconds, cores: pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - cpuBefore[i]!, 0) / seconds };
}

async function embedded(targetUrl: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', OPS_PORT: '0', TOCK_BOOTSTRAP_TOKEN: TOKEN, TOCK_RATE_LIMIT: '0', TOCK_ALLOW_NETWORKS: '127.0.0.0/8', LOG_LEVEL: 'error' });
  const system = await startEmbedded({ config, log: createLogger('bench', {}, 'error'), print: () => {} });
  try {
    await addJobs(apiClient(`http://127.0.0.1:${system.port}`, TOKEN), targetUrl, EMBEDDED_JOBS);
    return (await measure(async () => (await system.logs.view.size()).log)).rate;
  } finally {
    await system.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function distributed(targetUrl: string) {
  const nc = await connect({ servers: NATS_URL });
  const jsm = await jetstreamManager(nc);
  for (const name of ['RUNS', 'EXECUTIONS']) await jsm.streams.delete(name).catch(() => undefined);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-bench-'));
  const env = await distributedEnv(dataDir, { NATS_URL, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', LOG_LEVEL: 'info' });
  const procs: ServiceProcess[] = [];
  try {
    procs.push(await startService('jobs', env, /jobs service listening/));
    procs.push(await startService('logs', env, /logs service listening/));
    procs.push(await startService('planner', env, /planner service listening/));
    procs.push(await startService('executor', env, /executor consuming/));
    procs.push(await startService('executor', { ...env, TOCK_SERVER_NAME: 'executor-2' }, /executor consuming/));
    procs.push(await startService('gateway', env, /gateway listening/));
    const created = await runCli(['account', 'create', '--limit', '0'], env);
    const api = apiClient(`http://127.0.0.1:${env.PORT}`, capture(/token: ([A-Za-z0-9]{32})/, created.stdout));
    await addJobs(api, targetUrl, DISTRIBUTED_JOBS);
    // What the logs durable has acknowledged is what cron_logs can show.
    const executors = procs.filter((p) => p.name === 'executor').map((p) => p.child.pid!);
    return await measure(async () => {
      const consumers = await jsm.consumers.list('EXECUTIONS').next();
      const logs = consumers.find((c) => c.name.startsWith('logs'));
      return logs ? logs.ack_floor.stream_seq : 0;
    }, executors);
  } finally {
    for (const p of procs.reverse()) await p.kill();
    for (const name of ['RUNS', 'EXECUTIONS']) await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const target = await startTargetProcess();
try {
  const raw = await rawUndici(target.url, 5);
  console.log(`raw undici (256 connections) : ${raw.toFixed(0)} requests/s`);
  console.log(`jobs every second, measured over ${SECONDS} s:`);
  const e = await embedded(target.url);
  console.log(`  embedded    : ${e.toFixed(0)} executions/s logged (${((e / raw) * 100).toFixed(1)}% of raw; target >= 25%; offered ${EMBEDDED_JOBS}/s)`);
  const d = await distributed(target.url);
  console.log(`  distributed : ${d.rate.toFixed(0)} executions/s logged (${((d.rate / raw) * 100).toFixed(1)}% of raw; target >= 10%; offered ${DISTRIBUTED_JOBS}/s)`);
  // For sizing (docs/sizing.md): what one executor core does, whatever else shares the machine.
  console.log(`                the 2 executors used ${d.cores.toFixed(2)} cores: ${(d.rate / d.cores).toFixed(0)} executions per executor core-second`);
} finally {
  await target.stop();
}
process.exit(0);
