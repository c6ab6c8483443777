/**
 * What a chaos run records, as plain data: the checker (checker.ts) judges it without any I/O, so
 * its rules are unit-tested on histories written by hand.
 */

/** A job as the client believes it to be after an operation. */
export interface JobState {
  exists: boolean;
  /** The path the job calls (without the query carrying `__timestamp_ms__`). */
  path: string;
  expression: string;
  paused: boolean;
}

export const ABSENT: JobState = { exists: false, path: '', expression: '', paused: false };

export type OpKind = 'add' | 'url' | 'schedule' | 'pause' | 'resume' | 'delete';

/**
 * One API call on one logical job (a `key`: one cron_add and what follows). Acknowledged: `ackMs`
 * is when the success answer arrived. Not acknowledged (an error, a reset, a timeout): its effect
 * is unknown until a later read; `ackMs` is then when that read answered and `after` is what it read.
 */
export interface Op {
  key: string;
  kind: OpKind;
  sendMs: number;
  ackMs: number;
  acknowledged: boolean;
  after: JobState;
  jobId?: number;
}

/** One request the target received. */
export interface Arrival {
  /** Path and query as received: `/c/<key>/v<n>?at=<__timestamp_ms__>`. */
  url: string;
  at: number;
  /** X-Tock-Scheduled-Time (Unix seconds). */
  scheduled: string;
  /** X-Tock-Run-Id. */
  runId: string;
}

/** One cron_logs result of a job. */
export interface LogResult {
  key: string;
  time: number;
  status: number;
  httpStatus: number;
  error: string;
  /** How many occurrences this late run stands for (0 or 1: an ordinary run). */
  missed: number;
}

/** An event of a job's stream in the event store. */
export interface StoreEvent {
  jobId: number;
  type: string;
  at: number;
}

/** A job as the final cron_list answered it. */
export interface FinalJob {
  id: number;
  path: string;
  expression: string;
  status: number;
}

/** One webhook message the notification receiver got. */
export interface Delivery {
  at: number;
  items: { id: number; time: number; event: string }[];
}

export type FaultKind = 'kill' | 'pause' | 'nats-restart' | 'postgres-restart' | 'partition';

export interface Fault {
  kind: FaultKind;
  /** The service instance (`executor-2`), or `nats`/`postgres`; for a partition `planner-1|nats`. */
  target: string;
  startMs: number;
  endMs: number;
}

export interface History {
  /** Occurrences scheduled in [fromMs, toMs] are judged. */
  fromMs: number;
  toMs: number;
  ops: Op[];
  arrivals: Arrival[];
  logs: LogResult[];
  /** Per key, the earliest scheduled time cron_logs still holds when retention cut older ones. */
  logsFrom: Record<string, number>;
  store: StoreEvent[];
  finalJobs: FinalJob[];
  deliveries: Delivery[];
  faults: Fault[];
  /** The misfire threshold (docs/operations.md, After downtime). */
  misfireMs: number;
}

export type AnomalyKind =
  | 'lost'
  | 'double'
  | 'not-in-effect'
  | 'wrong-url'
  | 'bad-timestamp'
  | 'unknown-call'
  | 'redelivery-unexplained'
  | 'log-missing'
  | 'log-extra'
  | 'log-double'
  | 'job-lost'
  | 'final-state'
  | 'edit-not-in-store'
  | 'notification-twice';

export interface Anomaly {
  kind: AnomalyKind;
  detail: string;
}

export interface Verdict {
  occurrences: { checked: number; required: number; optional: number; ran: number; collapsed: number };
  /** Calls repeated with the same run id (the at-least-once exception), by the fault that explains them. */
  redelivered: { total: number; byFault: Record<string, number> };
  notifications: { messages: number; items: number; repeatedAfterNotifierKill: number };
  anomalies: Anomaly[];
}
