/**
 * Planner figures: `npx tsx test/bench/planner.bench.ts` (exits by itself).
 * 1. Dispatch lateness when 100,000 jobs are due in the same second (so also in the same minute), through the in-process bus
 *    to a durable consumer: due instant -> message received. Next to it, in the same run, the
 *    yardstick: a bare timer's lateness and the same 10,000 messages published by a bare loop.
 * 2. The projection at 1,000,000 jobs: rebuild time (folding the events) and the start-up sweep
 *    (next occurrence of every job into the heap), and heap memory. Events are generated in
 *    memory and fed to the projection directly (SQLite is not what is measured here).
 *    Measured without a lead (the planner's own speed) and with the default lead (as deployed).
 * BENCH_JOBS overrides the 1,000,000; BENCH_DUE the 100,000.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { systemClock } from '../../shared/clock.ts';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { CONSUMERS, dueRunSubject, ensureTopology } from '../../shared/topology.ts';
import type { JobEvent } from '../../services/jobs/cronJob.ts';
import { defaultSettings } from '../../services/jobs/jobSettings.ts';
import { catchUp } from '../../services/planner/catchUp.ts';
import { ScheduleProjection } from '../../services/planner/scheduleProjection.ts';
import { TimerHeap } from '../../services/planner/timerHeap.ts';
import { startPlanner } from '../../services/planner/server.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const JOBS = Number(process.env.BENCH_JOBS ?? 1_000_000);
const DUE = Number(process.env.BENCH_DUE ?? 100_000);
const LEAD_MS = loadConfig({}).TOCK_DISPATCH_LEAD_MS;
const MiB = 1024 * 1024;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

function heapUsed() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function percentiles(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
  return `p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${(s[s.length - 1] ?? 0).toFixed(1)} ms (n=${s.length})`;
}

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

/** How late a bare timer fires: the floor under any timer-driven dispatch. */
async function bareTimer(samples = 50) {
  const late: number[] = [];
  for (let i = 0; i < samples; i++) {
    const at = Date.now() + 5 + (i % 7);
    await new Promise<void>((resolve) => systemClock.setTimer(at, () => (late.push(Date.now() - at), resolve())));
  }
  return late;
}

/** The same number of messages put on the bus by a bare loop at one instant: publish -> received. */
async function bareBus(n: number) {
  const bus = createInProcessBus();
  await ensureTopology(bus);
  const late: number[] = [];
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  let t0 = 0;
  const consumer = await bus.consume({ ...CONSUMERS.executors }, async (m) => {
    late.push(performance.now() - t0);
    await m.ack();
    if (late.length === n) done();
  });
  const payload = new Uint8Array(200).fill(7);
  heapUsed();
  t0 = performance.now();
  const window = 256;
  let next = 0;
  await Promise.all(Array.from({ length: window }, async () => {
    while (next < n) {
      const i = next++;
      await bus.publish(dueRunSubject(i + 1), payload, { msgId: `bare:${i}` });
    }
  }));
  await all;
  await consumer.stop();
  await bus.close();
  return late;
}

/** DUE jobs whose crontab fires at the same second, through the real planner and the in-process bus. */
async function plannerBurst(n: number, leadMs = 0) {
  const store = openSqliteEventStore(':memory:');
  const bus = createInProcessBus();
  const log = createLogger('bench', {}, 'silent');
  await ensureTopology(bus);
  const now = Date.now();
  const dueSecond = Math.ceil((now + 4000) / 1000);
  const second = dueSecond % 60;
  const base = defaultSettings('UTC');
  for (let i = 0; i < n; i += 1000) {
    for (let id = i + 1; id <= Math.min(n, i + 1000); id++) {
      const data = { id, accountId: 1, settings: { ...base, url: `http://127.0.0.1:9/${id}`, expression: `${second} * * * * *` }, at: now };
      await store.appendToStream(`cronjob-${id}`, [{ type: 'JobCreated', data }]);
    }
  }
  const late: number[] = [];
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  // Every run is due at the same instant: no need to decode (the bare loop's consumer does not either).
  const dueAt = dueSecond * 1000;
  const consumer = await bus.consume({ ...CONSUMERS.executors }, async (m) => {
    late.push(Date.now() - dueAt);
    await m.ack();
    if (late.length === n) done();
  });
  const t0 = performance.now();
  const server = await startPlanner({ store, bus, clock: systemClock, log, address: '127.0.0.1:0', leadMs });
  const startMs = performance.now() - t0;
  heapUsed(); // start the burst on a collected heap, as the bare loop does
  await all;
  const stats = server.planner.stats();
  await server.stop();
  await consumer.stop();
  await bus.close();
  await store.close();
  return { late, startMs, stats };
}

// The burst first, in a fresh process: a million jobs' garbage would otherwise tax its GC.
console.log(`dispatch, ${DUE.toLocaleString()} jobs due in the same second (in-process bus, durable consumer):`);
// The yardstick first, so the bus's own code is as warm for the planner as it was for the bare loop.
const timer = await bareTimer();
const bare = await bareBus(DUE);
const burst = await plannerBurst(DUE);
console.log(`  planner start (SQLite rebuild of ${DUE.toLocaleString()} jobs + sweep): ${fmt(burst.startMs)}`);
console.log(`  planner: due -> received by the consumer: ${percentiles(burst.late)}`);
const l = burst.stats.lateness;
console.log(`  planner: due -> publish acked (its own gauge): p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms (n=${l.count})`);
// As deployed: runs go on the bus ahead of their instant; negative figures are ms before it.
const led = await plannerBurst(DUE, LEAD_MS);
console.log(`  with the default lead (${LEAD_MS} ms), due -> received (negative: before the instant): ${percentiles(led.late)}`);
console.log('  yardstick, same run:');
console.log(`    bare timer lateness:                   ${percentiles(timer)}`);
console.log(`    bare loop, ${DUE.toLocaleString()} publishes -> received: ${percentiles(bare)}`);

console.log('');
await projectionFigures();
process.exit(0);
