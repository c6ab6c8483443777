import { fromBinary } from '@bufbuild/protobuf';
import type { Bus } from '../../../shared/bus/bus.ts';
import { createInProcessBus } from '../../../shared/bus/inProcessBus.ts';
import { FakeClock } from '../../../shared/clock.ts';
import type { EventStore } from '../../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { DueRunSchema, type DueRun } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createLogger } from '../../../shared/log.ts';
import { CONSUMERS, ensureTopology } from '../../../shared/topology.ts';
import type { JobEvent } from '../../../shared/job/index.ts';
import type { Planner } from '../../../services/planner/planner.ts';
import { startPlannerService } from '../../../services/planner/service.ts';
import { T0 } from '../../unit/planner/jobEvents.ts';

export const silent = createLogger('planner-test', {}, 'silent');

export interface Received {
  subject: string;
  run: DueRun;
}

/** One store (SQLite in memory), one in-process bus on a fake clock, and an executor-like consumer of RUNS. */
export async function world(start = T0) {
  const clock = new FakeClock(start);
  const store = openSqliteEventStore(':memory:');
  const bus = createInProcessBus({ clock });
  await ensureTopology(bus);
  const received: Received[] = [];
  const consumer = await bus.consume({ ...CONSUMERS.executors }, async (m) => {
    received.push({ subject: m.subject, run: fromBinary(DueRunSchema, m.data) });
    await m.ack();
  });
  const planners: Awaited<ReturnType<typeof startPlannerService>>[] = [];

  const w = {
    clock,
    store,
    bus: bus as Bus,
    received,
    /** Appends one job event to `cronjob-<id>`, as the jobs service does. */
    async append(id: number, ...events: JobEvent[]) {
      const result = await store.appendToStream(`cronjob-${id}`, events.map((e) => ({ type: e.type, data: e.data })));
      // Wait until every running planner has applied it (the subscription delivers asynchronously).
      for (let i = 0; i < 1000 && planners.some((p) => p.planner.projection.position < result.position); i++) await tick();
      return result;
    },
    async startPlanner(options: { misfireMs?: number; leadMs?: number; watermarkEveryMs?: number; store?: EventStore } = {}) {
      const server = await startPlannerService({ store: options.store ?? store, bus, clock, log: silent, address: '127.0.0.1:0', misfireMs: options.misfireMs, leadMs: options.leadMs, watermarkEveryMs: options.watermarkEveryMs });
      planners.push(server);
      return server;
    },
    /** Stops one planner; `flush: false` is a crash (no last watermark, nothing waited for). */
    async stopPlanner(server: Awaited<ReturnType<typeof startPlannerService>>, flush = true) {
      planners.splice(planners.indexOf(server), 1);
      await (flush ? server.stop() : server.crash());
    },
    /** Moves the fake clock and waits until everything due is published and delivered. */
    async advance(ms: number) {
      await clock.advance(ms);
      await w.settle();
    },
    async settle() {
      for (const p of planners) await p.planner.idle();
      for (let i = 0; i < 5; i++) await tick();
    },
    /** What arrived since the last call. */
    take(): Received[] {
      return received.splice(0, received.length);
    },
    async close() {
      for (const p of [...planners]) await w.stopPlanner(p);
      await consumer.stop();
      await bus.close();
      await store.close();
    },
  };
  return w;
}

export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The planners' counters (publishes, duplicates dropped by the bus). */
export const statsOf = (p: { planner: Planner }) => p.planner.stats();
