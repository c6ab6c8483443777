/**
 * Planner dispatch: `npx tsx test/bench/plannerDispatch.bench.ts` (exits by itself). 100,000 jobs
 * due in the same second (so also in the same minute), through the real planner and the in-process
 * bus to a durable consumer: due instant -> message received, without a lead (the planner's own
 * speed) and with the default lead (as deployed). Next to it, in the same run, the yardsticks: a
 * bare timer's lateness and the same number of messages published by a bare loop.
 * BENCH_DUE overrides the 100,000.
 */
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { systemClock } from '../../shared/clock.ts';
import { loadConfig } from '../../shared/config.ts';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';
import { createLogger } from '../../shared/log.ts';
import { CONSUMERS, ensureTopology } from '../../shared/topology.ts';
import { dueRunSubject } from '../../shared/subjects/planner.ts';
import { defaultSettings } from '../../shared/job/index.ts';
import { startPlannerService } from '../../services/planner/service.ts';
import { heapUsed, percentiles } from './support.ts';

const DUE = Number(process.env.BENCH_DUE ?? 100_000);
const LEAD_MS = loadConfig({}).TOCK_DISPATCH_LEAD_MS;
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

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
  const server = await startPlannerService({ store, bus, clock: systemClock, log, address: '127.0.0.1:0', leadMs });
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
process.exit(0);
