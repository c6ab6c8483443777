import type { Bus, ConsumerOptions, StreamConfig } from './bus/bus.ts';

/**
 * The bus topology, documented for third-party subscribers in docs/events.md. What each service
 * publishes on is in shared/subjects/ (one module per publisher):
 * - RUNS (work queue): `tock.runs.due.<jobId>` (the planner's) and `tock.runs.retry.<jobId>` (an
 *   executor's next attempt of a failed call), payload tock.v1.DueRun, message id = attempt id;
 *   `tock.runs.test.<accountId>` (the jobs service's cron_test calls), payload tock.v1.TestRun,
 *   message id = test id, answered live on `tock.tests.answer.<testId>` (tock.v1.TestAnswer).
 * - EXECUTIONS (kept 7 days): `tock.executions.<accountId>.<jobId>.<succeeded|failed|skipped>`,
 *   payload tock.v1.Execution, message id = run id.
 * - NOTIFICATIONS (kept 7 days): `tock.notifications.<accountId>.<kind>`, payload
 *   tock.v1.Notification, message id = notification id.
 */
export const MINUTE = 60_000;

export const RUNS_STREAM: StreamConfig = {
  name: 'RUNS',
  subjects: ['tock.runs.due.>', 'tock.runs.retry.>', 'tock.runs.test.>'],
  retention: 'workqueue',
  // Longer than any planner failover: a replayed or second planner's publish is dropped.
  duplicateWindowMs: 15 * MINUTE,
};

export const EXECUTIONS_STREAM: StreamConfig = {
  name: 'EXECUTIONS',
  subjects: ['tock.executions.>'],
  retention: 'limits',
  duplicateWindowMs: 15 * MINUTE,
  maxAgeMs: 7 * 24 * 60 * MINUTE,
  // The logs read model is the record; the stream is the feed and the rebuild source. Bounded so
  // a busy installation does not fill the disk (or, embedded, the memory) with old executions.
  maxMessages: 10_000_000,
};

export const NOTIFICATIONS_STREAM: StreamConfig = {
  name: 'NOTIFICATIONS',
  subjects: ['tock.notifications.>'],
  retention: 'limits',
  duplicateWindowMs: 15 * MINUTE,
  maxAgeMs: 7 * 24 * 60 * MINUTE,
  maxMessages: 1_000_000,
};

/** The planner's cancel notices (shared/subjects/planner.ts), which executors listen to. */
export const RUN_CANCEL_SUBJECTS = 'tock.runs.cancel.*';

/**
 * The cancel notices, kept for an hour (as long as an executor remembers them, and longer than a
 * retry waits): every executor reads the whole stream (Bus.watch), so one that was cut off from
 * NATS, or started after the change, still learns of it before it fires a run the change made
 * stale. Made by the planner and the executors only (their NATS users may).
 */
export const CANCELS_STREAM: StreamConfig = {
  name: 'CANCELS',
  subjects: [RUN_CANCEL_SUBJECTS],
  retention: 'limits',
  duplicateWindowMs: 2 * MINUTE,
  maxAgeMs: 60 * MINUTE,
};
export interface RunCancel {
  jobId: number;
  /** When the planner applied the change (ms): retries planned before it are stale. */
  before: number;
  /** The change's instant, the `plan_since` of the runs planned after it (a delete: its time). */
  since: number;
  /**
   * The occurrence boundary (ms): first attempts of occurrences after it that were planned from
   * an earlier version (plan_since below `since`) are stale, because the planner publishes them
   * again from the new state (or, the job paused or deleted, not at all). Occurrences at or
   * before it were due before the change and keep their run.
   */
  from: number;
}
export function decodeCancel(data: Uint8Array): RunCancel | null {
  try {
    const c = JSON.parse(new TextDecoder().decode(data)) as Partial<Record<keyof RunCancel, unknown>> | null;
    const { jobId, before, since, from } = c ?? {};
    const ok = Number.isSafeInteger(jobId) && [before, since, from].every(Number.isFinite);
    return ok ? { jobId: jobId as number, before: before as number, since: since as number, from: from as number } : null;
  } catch {
    return null;
  }
}

/** A test call (cron_test) among the due runs an executor takes: not a DueRun. */
export const isTestRunSubject = (subject: string) => subject.startsWith('tock.runs.test.');
/** The executors' answers to test calls (shared/subjects/executor.ts), which the jobs service listens to. */
export const TEST_ANSWER_SUBJECTS = 'tock.tests.answer.*';
export const testIdOfAnswer = (subject: string) => subject.slice('tock.tests.answer.'.length);
/**
 * A test call's bounds: it must be taken by an executor within TEST_PICKUP_MS of its request,
 * and its call lasts at most TEST_TIMEOUT_S (or the job's timeout when shorter), so the caller
 * (behind a gateway's gRPC deadline) has its answer or a clear refusal in time.
 */
export const TEST_PICKUP_MS = 5_000;
export const TEST_TIMEOUT_S = 20;

export type Outcome = 'succeeded' | 'failed' | 'skipped';

/** Durable consumers. Replicas of a service share one durable and so split its messages. */
export const CONSUMERS = {
  // Short: a due run held by an executor that died (kill -9) comes back within seconds, not minutes;
  // a live executor extends it (working()) while it holds a run or waits for a slow target.
  executors: { stream: 'RUNS', durable: 'executors', ackWaitMs: 5_000, maxAckPending: 20_000 },
  logs: { stream: 'EXECUTIONS', durable: 'logs', ackWaitMs: 30_000, maxAckPending: 10_000 },
  jobsFailures: { stream: 'EXECUTIONS', durable: 'jobs-failures', ackWaitMs: 30_000, maxAckPending: 5_000 },
  notifier: { stream: 'EXECUTIONS', durable: 'notifier', ackWaitMs: 30_000, maxAckPending: 1_000 },
} satisfies Record<string, ConsumerOptions>;

const ensured = new WeakMap<Bus, Promise<void>>();

export interface TopologyOptions {
  executionsKept?: number;
  duplicateWindowMs?: number;
}

/**
 * Embedded mode's streams: every service that ensures the topology on the in-process bus (or on
 * a thread's view of it) must ask for these, or its call would widen them back to the defaults.
 */
export const EMBEDDED_TOPOLOGY: TopologyOptions = { executionsKept: 20_000, duplicateWindowMs: 2 * MINUTE };

/**
 * Creates (or updates) the streams, once per bus: every service calls it, and in embedded mode
 * the first call wins, with `executionsKept` (a small in-memory feed; the logs database is on
 * disk) and a short `duplicateWindowMs`: the in-process bus lives and dies with its one planner,
 * so there is no failover to outlast, only redeliveries (seconds), and every id in the window
 * is held in memory (15 minutes at 10,000 runs a second would be 18 million).
 */
export function ensureTopology(bus: Bus, options: TopologyOptions = {}): Promise<void> {
  let done = ensured.get(bus);
  if (!done) {
    const window = (stream: StreamConfig) => options.duplicateWindowMs ?? stream.duplicateWindowMs;
    done = (async () => {
      await bus.ensureStream({ ...RUNS_STREAM, duplicateWindowMs: window(RUNS_STREAM) });
      await bus.ensureStream({ ...EXECUTIONS_STREAM, duplicateWindowMs: window(EXECUTIONS_STREAM), maxMessages: options.executionsKept ?? EXECUTIONS_STREAM.maxMessages });
      await bus.ensureStream({ ...NOTIFICATIONS_STREAM, duplicateWindowMs: window(NOTIFICATIONS_STREAM), maxMessages: options.executionsKept ?? NOTIFICATIONS_STREAM.maxMessages });
    })();
    done.catch(() => ensured.delete(bus));
    ensured.set(bus, done);
  }
  return done;
}
