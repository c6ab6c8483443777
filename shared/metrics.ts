import type { Bus } from './bus/bus.ts';
import { lostLogLines } from './log.ts';
import type { SkipReasonName } from './skipReasons.ts';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/**
 * Every Tock metric, created once per thread on one registry: services only call inc()/observe()
 * on these objects (or register a source read at scrape time), never build metric names or label
 * strings themselves. Labels come from our own fixed sets, never from requests or job data.
 *
 * A worker thread (the embedded executor) gets its own copy of this module, hence its own
 * registry; the main thread asks it for a snapshot at scrape time and sums both (`renderMetrics`).
 */
export const registry = new Registry();

/** Seconds, from a millisecond to ten minutes: run lateness, target calls, API calls. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];
/** Store appends and deliveries: fast local writes up to a stalled remote store. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const executions = new Counter({
  name: 'tock_executions_total',
  help: 'Executions published by the executors, by outcome (succeeded, failed, skipped).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const targetDuration = new Histogram({
  name: 'tock_target_request_duration_seconds',
  help: "Duration of the HTTP calls to job targets (request sent to response read or failure), by the run's outcome.",
  labelNames: ['outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** What the executor records per run; children are bound once so a run only adds numbers. */
export const runMetrics = {
  executions: { succeeded: executions.labels('succeeded'), failed: executions.labels('failed'), skipped: executions.labels('skipped') },
  lateness: new Histogram({
    name: 'tock_run_lateness_seconds',
    help: "From a run's scheduled instant to its request being sent (late runs after downtime included).",
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  }),
  targetDuration: { succeeded: targetDuration.labels('succeeded'), failed: targetDuration.labels('failed') },
};

const runsSkipped = new Counter({
  name: 'tock_runs_skipped_total',
  help: 'Scheduled runs not made, by reason (instances, fair_share, account_disabled).',
  labelNames: ['reason'] as const,
  registers: [registry],
});

/**
 * Runs that did not happen on time for a reason Tock knows (the exception path: nothing here is
 * touched by a run made on time). Children bound once, so every reason is exported from 0 and an
 * alert on a rate has a series before the first skip.
 */
export const skipMetrics = {
  skipped: <Record<SkipReasonName, ReturnType<typeof runsSkipped.labels>>>{ instances: runsSkipped.labels('instances'), fair_share: runsSkipped.labels('fair_share'), account_disabled: runsSkipped.labels('account_disabled') },
  missed: new Counter({
    name: 'tock_runs_missed_total',
    help: 'Scheduled occurrences missed by more than the misfire threshold after downtime (each collapsed into one late run per job).',
    registers: [registry],
  }),
  lapsed: new Counter({
    name: 'tock_runs_lapsed_total',
    help: 'Runs an executor left uncalled because it was starved past their ack wait: the bus redelivers them (late, not made twice).',
    registers: [registry],
  }),
};

export const apiRequestDuration = new Histogram({
  name: 'tock_api_request_duration_seconds',
  help: 'API requests by function and result code (0 success; see the API error codes), in seconds.',
  labelNames: ['function', 'code'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const storeMetrics = {
  append: new Histogram({
    name: 'tock_eventstore_append_duration_seconds',
    help: 'Event store appends, in seconds (conflicts included).',
    buckets: STORE_BUCKETS,
    registers: [registry],
  }),
  delivery: new Histogram({
    name: 'tock_eventstore_delivery_seconds',
    help: 'Subscriptions once caught up: from an event being appended to its handler being called, by category.',
    labelNames: ['category'] as const,
    buckets: STORE_BUCKETS,
    registers: [registry],
  }),
  lag: new Gauge({
    name: 'tock_eventstore_subscription_lag_seconds',
    help: 'Age of the last event a subscription delivered, when delivered (large while catching up), by category.',
    labelNames: ['category'] as const,
    registers: [registry],
  }),
  catchUp: new Gauge({
    name: 'tock_eventstore_catchup_seconds',
    help: 'How long the last subscription of a category took to deliver everything stored before it started.',
    labelNames: ['category'] as const,
    registers: [registry],
  }),
};

/** Notifications delivered (or not) per channel: the notifier increments it. */
export const notifications = new Counter({
  name: 'tock_notifications_total',
  help: 'Notification deliveries, by channel type and outcome (delivered, failed).',
  labelNames: ['channel', 'outcome'] as const,
  registers: [registry],
});

/**
 * Log lines the destination refused (disk full, closed pipe): the process goes on without them.
 * Read from log.ts at scrape time, so logging does not load the metrics library (a CLI logs, and
 * is never scraped).
 */
let logLinesCounted = 0;
new Counter({
  name: 'tock_log_write_errors_total',
  help: 'Failed writes of log lines (destination full or closed); those lines are lost.',
  registers: [registry],
  collect() {
    const lost = lostLogLines();
    this.inc(lost - logLinesCounted);
    logLinesCounted = lost;
  },
});

/** A value read at scrape time (nothing recorded on the hot path). */
export type Probe<T> = () => T;

const plannerSources = new Set<Probe<{ jobs: number; heap: number; published: number; duplicates: number; errors: number }>>();
// One read of every planner per scrape (the five metrics below ask in turn; a probe may sort samples).
let plannerRead = { at: 0, sums: { jobs: 0, heap: 0, published: 0, duplicates: 0, errors: 0 } };
const plannerSum = (key: 'jobs' | 'heap' | 'published' | 'duplicates' | 'errors') => {
  if (Date.now() - plannerRead.at > 100) {
    const sums = { jobs: 0, heap: 0, published: 0, duplicates: 0, errors: 0 };
    for (const probe of plannerSources) {
      const figures = probe();
      for (const k of Object.keys(sums) as (keyof typeof sums)[]) sums[k] += figures[k];
    }
    plannerRead = { at: Date.now(), sums };
  }
  return plannerRead.sums[key];
};
const fromPlanner = (key: Parameters<typeof plannerSum>[0]) =>
  function (this: Gauge | Counter) {
    this.reset();
    if (plannerSources.size > 0) (this as Gauge).inc(plannerSum(key));
  };
new Gauge({ name: 'tock_planner_heap_entries', help: 'Runs and ticks the planner holds in its heap (about one per active job).', registers: [registry], collect: fromPlanner('heap') });
new Gauge({ name: 'tock_planner_jobs', help: 'Jobs in the planner schedule projection.', registers: [registry], collect: fromPlanner('jobs') });
new Counter({ name: 'tock_planner_published_total', help: 'Due runs the planner put on the bus.', registers: [registry], collect: fromPlanner('published') });
new Counter({ name: 'tock_planner_duplicates_total', help: 'Due runs the bus dropped as already published (another replica, a replay).', registers: [registry], collect: fromPlanner('duplicates') });
new Counter({ name: 'tock_planner_publish_errors_total', help: 'Failed publishes of due runs (each retried).', registers: [registry], collect: fromPlanner('errors') });

/** Reports a planner's figures at each scrape; returns the unregister function. */
export function watchPlanner(probe: Probe<{ jobs: number; heap: number; published: number; duplicates: number; errors: number }>) {
  plannerSources.add(probe);
  plannerRead.at = 0;
  return () => {
    plannerSources.delete(probe);
    plannerRead.at = 0;
  };
}

/** A durable consumer's backlog as the bus reports it. */
export interface ConsumerBacklog {
  /** Messages in the stream not yet delivered to the durable. */
  pending: number;
  /** Delivered, not yet acknowledged. */
  ackPending: number;
}
type BacklogSource = { stream: string; durable: string; read: () => Promise<ConsumerBacklog | undefined> };
const backlogSources = new Set<BacklogSource>();
async function readBacklogs() {
  return Promise.all(
    [...backlogSources].map(async (s) => ({ s, backlog: await s.read().catch(() => undefined) })),
  );
}
// prom-client collects metrics concurrently: each gauge reads the backlogs itself.
const backlogGauge = (name: string, help: string, key: keyof ConsumerBacklog) =>
  new Gauge({
    name,
    help,
    labelNames: ['stream', 'durable'] as const,
    registers: [registry],
    async collect() {
      const read = await readBacklogs();
      this.reset();
      for (const { s, backlog } of read) if (backlog) this.set({ stream: s.stream, durable: s.durable }, backlog[key]);
    },
  });
backlogGauge('tock_bus_consumer_pending_messages', 'Bus consumer lag: messages of the stream not yet delivered to the durable consumer.', 'pending');
backlogGauge('tock_bus_consumer_ack_pending_messages', 'Messages delivered to the durable consumer and not yet acknowledged.', 'ackPending');

/** Reports the backlog of these durable consumers at each scrape; returns the unregister function. */
export function watchConsumers(bus: Pick<Bus, 'backlog'>, consumers: { stream: string; durable: string }[]) {
  const added = consumers.map((c) => ({ stream: c.stream, durable: c.durable, read: async () => bus.backlog?.(c.stream, c.durable) }));
  for (const s of added) backlogSources.add(s);
  return () => {
    for (const s of added) backlogSources.delete(s);
  };
}

let defaults = false;
/** Node's process metrics (CPU, memory, heap, event loop lag, handles): once per process, on the main thread. */
export function collectProcessMetrics() {
  if (defaults) return;
  defaults = true;
  collectDefaultMetrics({ register: registry });
}

/** This thread's metrics as plain data, for another thread to merge. */
export const metricsSnapshot = () => registry.getMetricsAsJSON();

export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/**
 * The exposition of this thread's registry plus snapshots from other threads (summed per series:
 * counters and histograms add up; no gauge is recorded by two threads).
 */
export async function renderMetrics(others: (() => Promise<MetricsSnapshot | undefined>)[] = []): Promise<{ contentType: string; body: string }> {
  if (others.length === 0) return { contentType: registry.contentType, body: await registry.metrics() };
  const snapshots = await Promise.all([metricsSnapshot(), ...others.map((o) => o().catch(() => undefined))]);
  const merged = AggregatorRegistry.aggregate(snapshots.filter((s): s is MetricsSnapshot => s !== undefined));
  return { contentType: merged.contentType, body: await merged.metrics() };
}
