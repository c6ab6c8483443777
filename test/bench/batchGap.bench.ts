// The batch gap: while one cron_batch_add adds 1000 of the costliest schedules (sparse filters
// over 1-second intervals and crontabs, each different), how much of this thread's CPU passes
// between two answers to /healthz, next to the same poller against the idle system (the yardstick,
// measured in the same run). The bound is the README's promise. In a process of its own: in a
// shared test process, other files' leftovers use the same thread.
// Run: npm run bench -- batchGap
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { hostileBatch } from '../support/jobFixtures.ts';
import { threadCpuMs } from '../support/threadCpu.ts';
import { bound } from './bound.ts';

const GAP_BOUND_MS = 50;

// The CPU this thread used between two answers bounds how long its event loop was blocked,
// whatever else the machine is doing (the wall-clock gap also counts the 10 ms pause between polls
// and time spent waiting for a core).
const cpuNow = () => threadCpuMs() ?? (({ user, system }) => (user + system) / 1000)(process.cpuUsage());

/** Polls /healthz until `work` ends (and half a second more, for the planner to take the jobs in). */
async function gaps(baseUrl: string, work: () => Promise<unknown>) {
  let done = false;
  const seen: { wall: number; cpu: number }[] = [];
  const poller = (async () => {
    let last = performance.now();
    let lastCpu = cpuNow();
    while (!done) {
      const response = await fetch(`${baseUrl}/healthz`);
      await response.arrayBuffer();
      const now = performance.now();
      if (response.ok) {
        const cpu = cpuNow();
        seen.push({ wall: now - last, cpu: cpu - lastCpu });
        last = now;
        lastCpu = cpu;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const started = performance.now();
  await work();
  const workMs = performance.now() - started;
  await new Promise((r) => setTimeout(r, 500));
  done = true;
  await poller;
  return { workMs, polls: seen.length, wall: Math.max(...seen.map((g) => g.wall)), cpu: Math.max(...seen.map((g) => g.cpu)) };
}

const system = await startTestSystem();
try {
  const data = hostileBatch(1000);
  // One of each kind first: loading the time zone data, compiling the code paths and tabulating
  // each zone's offsets happen once per process, not per job, and are not what is measured.
  const warm = await ok<any[]>(system.api.call('cron_batch_add', { data: data.slice(0, 4).map((d) => ({ ...d, url: `${d.url}/warm` })) }));
  await ok(system.api.call('cron_batch_delete', { id: warm.map((j) => j.id) }));

  const idle = await gaps(system.baseUrl, () => new Promise((r) => setTimeout(r, 2000)));
  const batch = await gaps(system.baseUrl, () => ok<any[]>(system.api.call('cron_batch_add', { data })));
  console.log('1000 worst-case jobs in one cron_batch_add, /healthz polled meanwhile:');
  console.log(`  idle system (yardstick): ${idle.polls} polls, largest gap ${idle.wall.toFixed(0)} ms, this thread's CPU in a gap at most ${idle.cpu.toFixed(0)} ms`);
  console.log(`  during the batch       : cron_batch_add took ${batch.workMs.toFixed(0)} ms; ${batch.polls} polls, largest gap ${batch.wall.toFixed(0)} ms`);
  bound("this thread's CPU between two /healthz answers", batch.cpu, GAP_BOUND_MS);
} finally {
  await system.destroy();
}
process.exit(process.exitCode ?? 0);
