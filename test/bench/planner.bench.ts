/**
 * Planner projection figures: `npx tsx test/bench/planner.bench.ts` (exits by itself). The
 * projection at 1,000,000 jobs: rebuild time (folding the events), the start-up sweep (next
 * occurrence of every job into the heap), heap memory and the process's RSS. Events are generated
 * in memory and fed to the projection directly (SQLite is not what is measured here). Dispatch is
 * measured in plannerDispatch.bench.ts, in a process of its own. BENCH_JOBS overrides the 1,000,000.
 */
import type { JobEvent } from '../../shared/job/index.ts';
import { defaultSettings } from '../../shared/job/index.ts';
import { catchUp } from '../../services/planner/catchUp.ts';
import { ScheduleProjection } from '../../services/planner/scheduleProjection.ts';
import { TimerHeap } from '../../services/planner/timerHeap.ts';
import { heapUsed } from './support.ts';

const JOBS = Number(process.env.BENCH_JOBS ?? 1_000_000);
const MiB = 1024 * 1024;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

/** A realistic mix: the default interval, common crontabs, R draws, calendar intervals, one-time, three zones. */
const EXPRESSIONS = ['15 minutes', '15 minutes', '*/5 * * * *', '0 * * * *', '*/5 * * * *', 'R * * * *', '1 day 17:05', '30 * * * * *', '2 hours', '0 9 * * 1-5'];
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York'];

function* jobEvents(n: number, now: number): Generator<[number, JobEvent]> {
  const base = defaultSettings('UTC');
  for (let id = 1; id <= n; id++) {
    const created = now - ((id * 7919) % (30 * 86_400)) * 1000; // within the last 30 days
    const expression = id % 97 === 0 ? `@${Math.floor(now / 1000) + (id % 86_400)}` : EXPRESSIONS[id % EXPRESSIONS.length]!;
    const settings = { ...base, url: `https://hooks.example.com/cron/${id}?token=${(id * 2654435761) >>> 0}`, expression, timezone: ZONES[id % 3]!, delay: id % 50 === 0 ? 5 : 0 };
    // As the store hands them over: parsed from JSON (strings and objects as a rebuild sees them).
    yield [id, { type: 'JobCreated', data: JSON.parse(JSON.stringify({ id, accountId: 1 + (id % 5000), settings, at: created })) }];
    if (id % 10 === 0) yield [id, { type: 'FailureCounted', data: { fail: 1, runId: `${id}:1`, at: created + 1000 } }];
    if (id % 20 === 0) yield [id, { type: 'JobPaused', data: { until: now + 3_600_000, at: created + 2000 } }];
    if (id % 50 === 1) yield [id, { type: 'JobDisabled', data: { at: created + 3000 } }];
    if (id % 100 === 3) yield [id, { type: 'RunRequested', data: { runId: `${id}:r`, runAt: now + 60_000, payload: null, at: created + 4000 } }];
  }
}

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

  type E = { at: number; jobId: number; version: number };
  const heap = new TimerHeap<E>((e) => projection.get(e.jobId)?.version === e.version);
  const t1 = performance.now();
  const entries: E[] = [];
  let due = 0;
  for (const plan of projection.plans.values()) {
    const c = catchUp(plan, { at: now - 5000, position }, now, 10_000);
    due += c.due.length;
    if (c.next !== null) entries.push({ at: c.next, jobId: plan.job.id, version: plan.version });
  }
  heap.pushAll(entries);
  const sweepMs = performance.now() - t1;
  const afterSweep = heapUsed();
  console.log(`projection, ${JOBS.toLocaleString()} jobs (${events.toLocaleString()} events):`);
  console.log(`  rebuild (fold events):          ${fmt(foldMs)}  (${Math.round(events / (foldMs / 1000)).toLocaleString()} events/s; generating and JSON-parsing them took another ${fmt(generateMs)})`);
  console.log(`  start sweep (next run -> heap): ${fmt(sweepMs)}  (${heap.size.toLocaleString()} timers, ${due} catch-up runs)`);
  console.log(`  heap memory: projection ${((afterFold - before) / MiB).toFixed(0)} MiB, + timers ${((afterSweep - afterFold) / MiB).toFixed(0)} MiB; rss ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
  console.log(`  (${projection.size.toLocaleString()} live plans, ${heap.size.toLocaleString()} timers held while measured)`);
}

await projectionFigures();
process.exit(0);
