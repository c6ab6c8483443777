// API throughput (issue 23's row): cron_get and cron_add per second through one gateway, Tock
// started as `npm start` starts it with the rate limit off, next to a bare Koa route in its own
// process (versus/bareKoa.ts) and a bare loopback gRPC call (versus/grpcEcho.ts) measured in the
// same run. Tock and the Koa route get the same client: 32 requests in flight over keep-alive
// connections for BENCH_API_SECONDS (default 10) each. CPU per request is the server's process
// tree, read from /proc. cron_get is measured twice: on jobs that never ran, and on jobs with
// results in the day (BENCH_API_HISTORY_S of runs, default 30), whose health the logs count.
// Run: npm run bench -- api
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { FINDING_EXIT } from './bound.ts';
import { startSink } from './versus/sinkProcess.ts';
import { sleep, stopTree, startTock } from './versus/tock.ts';
import { treeUsage } from './versus/procTree.ts';

const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 10);
const IN_FLIGHT = 32;
const JOBS = 1000;
/** Seconds the jobs of the history phase run every second before cron_get reads them: so many results each. */
const HISTORY_S = Number(process.env.BENCH_API_HISTORY_S ?? 30);

interface Load {
  perSecond: number;
  p50: number;
  p99: number;
  cpuUsPerRequest: number;
  failed: number;
}

/** Keeps IN_FLIGHT requests of `body(i)` to /api/v1/`fn` going for SECONDS; `pid` is the server's. */
async function load(origin: string, token: string, pid: number, fn: string, body: (i: number) => unknown): Promise<Load> {
  const pool = new Pool(origin, { connections: IN_FLIGHT });
  const latencies: number[] = [];
  let failed = 0;
  let n = 0;
  const send = async () => {
    const sent = performance.now();
    const r = await pool.request({ path: `/api/v1/${fn}`, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body(n++)) });
    const answer = (await r.body.json()) as { status?: string };
    if (r.statusCode !== 200 || answer.status !== 'success') failed++;
    return performance.now() - sent;
  };
  // Warm: the first requests compile the code paths and open the connections.
  for (let i = 0; i < 200; i++) await send();
  const cpu0 = treeUsage(pid).cpuUs;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < end) latencies.push(await send());
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpuUs = treeUsage(pid).cpuUs - cpu0;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { perSecond: latencies.length / seconds, p50: at(0.5), p99: at(0.99), cpuUsPerRequest: cpuUs / latencies.length, failed };
}

/** Resolves once `pid`'s tree has used under 10% of a core for half a second (the views and the planner done taking the batch in), or after 10 s. */
async function quiet(pid: number) {
  for (let i = 0; i < 20; i++) {
    const before = treeUsage(pid).cpuUs;
    await new Promise((r) => setTimeout(r, 500));
    if (treeUsage(pid).cpuUs - before < 50_000) return;
  }
}

/** A floor (issue 23's API targets): below it is a finding, as with bound.ts's ceilings. */
function atLeast(what: string, value: number, floor: number) {
  const text = `${what}: ${value.toFixed(0)} (at least ${floor})`;
  if (value >= floor) console.log(`  ${text}`);
  else {
    console.log(`  FINDING: ${text}`);
    process.exitCode = FINDING_EXIT;
  }
}

const line = (who: string, fn: string, l: Load, yardstick?: Load) =>
  console.log(
    `  ${who.padEnd(9)} ${fn.padEnd(8)} ${l.perSecond.toFixed(0).padStart(6)}/s  p50 ${l.p50.toFixed(1)} ms  p99 ${l.p99.toFixed(1)} ms  CPU ${l.cpuUsPerRequest.toFixed(0)} µs/request` +
      (yardstick ? `  (${((100 * l.perSecond) / yardstick.perSecond).toFixed(0)}% of bare Koa)` : '') +
      (l.failed ? `  ${l.failed} FAILED` : ''),
  );

console.log(`API throughput, ${IN_FLIGHT} requests in flight for ${SECONDS} s each (load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}):`);
const koa = spawn(process.execPath, ['--import', 'tsx', 'test/bench/versus/bareKoa.ts'], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
const [chunk] = (await once(koa.stdout, 'data')) as [Buffer];
const koaOrigin = `http://127.0.0.1:${/port (\d+)/.exec(String(chunk))![1]}`;
const bare = await load(koaOrigin, 'none', koa.pid!, 'cron_get', () => ({ id: 1 }));
line('bare Koa', 'any', bare);
await stopTree(koa);
// Embedded Tock's gateway reaches its services over loopback gRPC (the design's): one call's cost
// here bounds what any function that makes one can reach.
const echo = spawn(process.execPath, ['--import', 'tsx', 'test/bench/versus/grpcEcho.ts', String(SECONDS), String(IN_FLIGHT)], { stdio: ['ignore', 'pipe', 'inherit'] });
const [echoLine] = (await once(echo.stdout, 'data')) as [Buffer];
const grpcCall = JSON.parse(String(echoLine)) as { perSecond: number; cpuUsPerCall: number };
console.log(`  bare gRPC unary echo  ${grpcCall.perSecond.toFixed(0).padStart(6)}/s  CPU ${grpcCall.cpuUsPerCall.toFixed(0)} µs/call (grpc-js, client and server in one process, loopback)`);

const tock = await startTock({ TOCK_ACCOUNT_JOB_LIMIT: '0' });
try {
  // One batch (the API's largest): the jobs cron_get reads, none due while the bench runs.
  await tock.call('cron_batch_add', { data: Array.from({ length: JOBS }, (_, k) => ({ url: `http://127.0.0.1:9/api/${k}`, expression: '0 0 1 1 *' })) });
  await quiet(tock.pid);
  const get = await load(tock.api, tock.token, tock.pid, 'cron_get', (i) => ({ id: 1 + ((i * 7919) % JOBS) }));
  line('Tock', 'cron_get', get, bare);
  console.log(`            cron_get costs ${(get.cpuUsPerRequest / grpcCall.cpuUsPerCall).toFixed(1)} bare gRPC calls of CPU`);
  const add = await load(tock.api, tock.token, tock.pid, 'cron_add', (i) => ({ url: `http://127.0.0.1:9/added/${i}`, expression: '0 0 1 1 *', name: `added ${i}` }));
  line('Tock', 'cron_add', add, bare);
  console.log(`            cron_add costs ${(add.cpuUsPerRequest / grpcCall.cpuUsPerCall).toFixed(1)} bare gRPC calls of CPU`);
  // Job records carry the job's health from the logs (last result, the day's counts, 24 hours):
  // the same read on jobs that ran every second for HISTORY_S, then were disabled.
  const sink = await startSink();
  try {
    const data = Array.from({ length: JOBS }, (_, k) => ({ url: `${sink.url}/history/${k}?s=__timestamp_ms__`, expression: '* * * * * *' }));
    const ids = ((await tock.call('cron_batch_add', { data })) as { data: { id: number }[] }).data.map((j) => j.id);
    await sleep(HISTORY_S * 1000);
    const listed = (await tock.call('cron_batch_disable', { id: ids.join(',') })) as { data: { runs24h: number }[] };
    const runs = listed.data.map((j) => j.runs24h).sort((a, b) => a - b);
    await quiet(tock.pid);
    const history = await load(tock.api, tock.token, tock.pid, 'cron_get', (i) => ({ id: ids[(i * 7919) % JOBS] }));
    line('Tock', 'cron_get', history, bare);
    console.log(`            of jobs with history: ${runs[0]} to ${runs[runs.length - 1]} results each in the day`);
  } finally {
    await sink.stop();
  }
  atLeast('cron_get per second', get.perSecond, 4000);
  atLeast('cron_add per second', add.perSecond, 2000);
} finally {
  await tock.stop();
}
