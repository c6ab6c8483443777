/**
 * The jobs service's memory per job, for sizing (docs/sizing.md): its read model (every job,
 * account and group in memory, rebuilt at each start) folded from the same events as
 * planner.bench.ts, fed directly (the store is not what is measured). Heap held and the process's
 * RSS, and the rebuild's pace. BENCH_JOBS overrides the 1,000,000; accounts are one per 200 jobs.
 * Run: npx tsx test/bench/jobsView.bench.ts
 */
import { streamName, type RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { JobsView } from '../../services/jobs/jobsView.ts';
import { jobEvents } from './jobEvents.ts';
import { heapUsed } from './support.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 1_000_000);
const MiB = 1024 * 1024;

const view = new JobsView();
const before = heapUsed();
const now = Date.now();
let position = 0n;
const revisions = new Map<number, number>();
const record = (stream: string, revision: number, e: { type: string; data: unknown }): RecordedEvent => ({ id: `${position}`, stream, type: e.type, data: e.data, metadata: {}, revision, position: ++position, time: now });
let foldMs = 0;
for (const [id, e] of jobEvents(JOBS, now)) {
  const revision = (revisions.get(id) ?? -1) + 1;
  revisions.set(id, revision);
  const recorded = record(streamName('cronjob', id), revision, e);
  const t = performance.now();
  view.apply(recorded);
  foldMs += performance.now() - t;
}
revisions.clear();
const held = heapUsed() - before;
console.log(`jobs read model, ${JOBS.toLocaleString('en-US')} jobs (${position.toLocaleString('en-US')} events):`);
console.log(`  rebuild (fold events): ${(foldMs / 1000).toFixed(1)} s  (${Math.round(Number(position) / (foldMs / 1000)).toLocaleString('en-US')} events/s)`);
console.log(`  heap memory: ${(held / MiB).toFixed(0)} MiB (${((held / JOBS) / 1024).toFixed(2)} KiB a job); rss ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
// Keeps the view reachable until measured.
if (view.live) console.log('');
process.exit(0);
