// On time: 1000 jobs every second for 20 s in embedded mode, lateness from the scheduled instant
// to the request arriving at a target in its own process, next to undici alone firing the same
// burst at once. Every occurrence must arrive once; the lateness bound is the promise.
// Run: npm run bench -- onTime   (TOCK_ON_TIME_JOBS, TOCK_ON_TIME_SECONDS change the size)
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { waitFor } from '../support/waitFor.ts';
import { startTargetProcess, type Arrival } from '../support/targetProcess.ts';
import { bound } from './bound.ts';
import { figures, fmt, rawBurst } from './support.ts';

const JOBS = Number(process.env.TOCK_ON_TIME_JOBS ?? 1000);
const SECONDS = Number(process.env.TOCK_ON_TIME_SECONDS ?? 20);
// Seconds of runs before the measured ones: the first calls open the connections and run the
// executor's code cold. They are still checked (each occurrence once), and their lateness shown.
const WARM_UP = 3;
const P99_BOUND_MS = 1000;

const target = await startTargetProcess();
await target.warmUp();
const system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
try {
  const data = Array.from({ length: JOBS }, (_, i) => ({ url: `${target.url}/job/${i}`, expression: '* * * * * *', name: `tick ${i}` }));
  const jobs = await ok<any[]>(system.api.call('cron_batch_add', { data }));
  // Whole seconds that start after every job exists, so each job owes one run per second.
  const start = Math.ceil(Date.now() / 1000);
  const first = start + WARM_UP;
  const last = first + SECONDS - 1;
  // Tock's CPU (both threads of this process; the target is another process) over the measured seconds.
  await new Promise((r) => setTimeout(r, first * 1000 - Date.now()));
  const cpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, (last + 1) * 1000 - Date.now()));
  const cpu = process.cpuUsage(cpu0);
  let received: Arrival[] = [];
  await waitFor(async () => {
    received = await target.arrivals();
    return received.filter((r) => Number(r.scheduled) === last).length >= JOBS;
  }, 'the last second', 15_000);
  await ok(system.api.call('cron_batch_delete', { id: jobs.map((j) => j.id) }));

  const window = received.filter((r) => Number(r.scheduled) >= first && Number(r.scheduled) <= last);
  const all = received.filter((r) => Number(r.scheduled) >= start && Number(r.scheduled) <= last);
  const perOccurrence = new Map<string, number>();
  for (const r of all) perOccurrence.set(`${r.url}@${r.scheduled}`, (perOccurrence.get(`${r.url}@${r.scheduled}`) ?? 0) + 1);
  const lateness = (runs: Arrival[]) => figures(runs.map((r) => r.at - Number(r.scheduled) * 1000));
  const measured = lateness(window);

  const rawTarget = await startTargetProcess();
  const instant = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  await rawBurst(rawTarget.url, JOBS, instant);
  const raw = figures((await rawTarget.arrivals()).filter((a) => a.url.startsWith('/raw/')).map((a) => a.at - instant));
  await rawTarget.stop();

  console.log(`${JOBS} jobs every second for ${SECONDS} s (after ${WARM_UP} s of warm-up):`);
  console.log(`  raw undici burst : ${fmt(raw)}`);
  console.log(`  tock (embedded)  : ${fmt(measured)} (warm-up: ${fmt(lateness(all.filter((r) => Number(r.scheduled) < first)))})`);
  console.log(`  CPU per run: ${((cpu.user + cpu.system) / (JOBS * SECONDS)).toFixed(0)} µs (user ${(cpu.user / (JOBS * SECONDS)).toFixed(0)}, system ${(cpu.system / (JOBS * SECONDS)).toFixed(0)}), this process's two threads`);
  bound('occurrences missing', JOBS * (WARM_UP + SECONDS) - perOccurrence.size, 1, 'runs');
  bound('occurrences that arrived twice', [...perOccurrence.values()].filter((n) => n > 1).length, 1, 'runs');
  bound('lateness p99', measured.p99, P99_BOUND_MS);
} finally {
  await system.destroy();
  await target.stop();
}
process.exit(process.exitCode ?? 0);
