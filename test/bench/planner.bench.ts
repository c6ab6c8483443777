/**
 * Planner projection figures: `npx tsx test/bench/planner.bench.ts` (exits by itself). The
 * projection at 1,000,000 jobs: rebuild time (folding the events), the start-up sweep (next
 * occurrence of every job into the heap), heap memory and the process's RSS. Events are generated
 * in memory and fed to the projection directly (SQLite is not what is measured here). Dispatch is
 * measured in plannerDispatch.bench.ts, in a process of its own. BENCH_JOBS overrides the 1,000,000.
 */
import { catchUp } from '../../services/planner/catchUp.ts';
import { ScheduleProjection } from '../../services/planner/scheduleProjection.ts';
import { EntryHeap } from '../../services/planner/entryHeap.ts';
import { entryOf, isCurrentEntry, TICK } from '../../services/planner/firing.ts';
import { jobEvents } from './jobEvents.ts';
import { heapUsed } from './support.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 1_000_000);
const MiB = 1024 * 1024;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function projectionFigures() {
  const now = Date.now();
  const before = heapUsed();
  const projection = new ScheduleProjection({ at: now - 5000, position: BigInt(Number.MAX_SAFE_INTEGER) });
  let position = 0n;
  let events = 0;
  let foldMs = 0;
  const t0 = performance.now();
  for (const [id, e] of jobEvents(JOBS, now)) {
    const t = performance.now();
    projection.apply(id, e, ++position);
    foldMs += performance.now() - t;
    events++;
  }
  const generateMs = performance.now() - t0 - foldMs;
  const afterFold = heapUsed();

  // The planner's own heap and entries (lead 0, as by default).
  const heap = new EntryHeap((jobId, version) => projection.get(jobId)?.version === version, (e) => isCurrentEntry(projection, e), 0);
  const t1 = performance.now();
  let due = 0;
  for (const plan of projection.plans.values()) {
    const c = catchUp(plan, { at: now - 5000, position }, now, 10_000);
    due += c.due.length;
    if (c.next !== null) heap.push(entryOf(plan, TICK, c.next, c.next, 0));
  }
  const sweepMs = performance.now() - t1;
  const afterSweep = heapUsed();
  const rss = process.memoryUsage().rss;
  // V8 gives the pages the rebuild's garbage held back to the system a few seconds later, when idle.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  heapUsed();
  const settled = process.memoryUsage().rss;
  console.log(`projection, ${JOBS.toLocaleString()} jobs (${events.toLocaleString()} events):`);
  console.log(`  rebuild (fold events):          ${fmt(foldMs)}  (${Math.round(events / (foldMs / 1000)).toLocaleString()} events/s; generating and JSON-parsing them took another ${fmt(generateMs)})`);
  console.log(`  start sweep (next run -> heap): ${fmt(sweepMs)}  (${heap.size.toLocaleString()} timers, ${due} catch-up runs)`);
  console.log(`  heap memory: projection ${((afterFold - before) / MiB).toFixed(0)} MiB, + timers ${((afterSweep - afterFold) / MiB).toFixed(0)} MiB; rss ${(rss / MiB).toFixed(0)} MiB at once, ${(settled / MiB).toFixed(0)} MiB 5 s later`);
  console.log(`  (${projection.size.toLocaleString()} live plans, ${heap.size.toLocaleString()} timers held while measured)`);
}

await projectionFigures();
process.exit(0);
