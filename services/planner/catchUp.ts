import {
  delayMs,
  isScheduled,
  occurrenceAfter,
  planFloor,
  publishAt,
  takesQueuedRuns,
  type JobPlan,
} from './occurrences.ts';

/** What the planner had published when it last said so: every run due at or before `at`, and every event up to `position` applied. */
export interface Watermark {
  at: number;
  position: bigint;
}

/** A run the planner has decided to put on the bus, with its instant and its id (dueRun.ts turns it into a DueRun). */
export interface PlannedRun {
  jobId: number;
  /** `<jobId>:<occurrence ms>` for scheduled runs, the RunRequested runId for cron_run: the bus de-duplicates on it. */
  runId: string;
  occurrenceAt: number;
  /** When it is due (occurrence + delay, or the cron_run's time). */
  scheduledAt: number;
  manual: boolean;
  payload: string | null;
  /** Occurrences a late run stands for (0: an ordinary run). */
  missed: number;
  lateByMs: number;
  /** A record of runs not made (the account was disabled): the executor publishes a skip, calls nothing. */
  skip?: boolean;
}

/** The run id of a scheduled occurrence: the same in every planner replica and after every restart. */
export const scheduledRunId = (jobId: number, occurrence: number) => `${jobId}:${occurrence}`;

export function scheduledRun(plan: JobPlan, occurrence: number, scheduledAt: number, extra: { missed?: number; lateByMs?: number } = {}): PlannedRun {
  const jobId = plan.job.id;
  return {
    jobId,
    runId: scheduledRunId(jobId, occurrence),
    occurrenceAt: occurrence,
    scheduledAt,
    manual: false,
    payload: null,
    missed: extra.missed ?? 0,
    lateByMs: extra.lateByMs ?? 0,
  };
}

export interface CatchUp {
  /** Publish now: the collapsed late run first, then the recent ones one by one, then overdue cron_runs. */
  due: PlannedRun[];
  /** Occurrences already past whose delayed run is still ahead: publish at `scheduledAt`. */
  delayed: PlannedRun[];
  /** The next occurrence after `now`, or null. */
  next: number | null;
}

/** Occurrences counted one by one before the count of a long outage jumps to its last stretch. */
const CATCH_UP_BUDGET = 100_000;

/**
 * What one job owes after the planner was down (pure). `watermark` null: the first start ever,
 * which starts from now. Otherwise the runs due in (watermark, now] were perhaps not published:
 * - due within `misfireMs` of now: published one by one (a quick restart loses nothing; the
 *   ones the previous planner did publish are dropped by the bus's msgId de-duplication);
 * - older ones: collapsed into ONE late run (the latest occurrence's run id, `missed` = how
 *   many, `lateByMs` = how late), then the job goes on on schedule.
 * Queued cron_runs whose time passed are due at once (their run id de-duplicates). Moves the
 * plan's chain anchor and cursor up to `now` and drops the queued runs it returns.
 */
export function catchUp(plan: JobPlan, watermark: Watermark | null, now: number, misfireMs: number): CatchUp {
  let result: CatchUp = { due: [], delayed: [], next: null };
  if (isScheduled(plan.job)) {
    const delay = delayMs(plan);
    // Runs with a publish time at or before `done` are known to be out.
    const done = watermark === null ? now : plan.fresh ? -Infinity : watermark.at;
    const from = watermark === null ? now - delay : plan.fresh ? plan.since : watermark.at - delay;
    result = owedSince(plan, from, done, now, misfireMs);
  }
  if (plan.queued) {
    const keep = [];
    for (const q of plan.queued) {
      if (q.runAt > now) keep.push(q);
      else if (!takesQueuedRuns(plan.job)) continue;
      // On the very first start there is no record of what went out: only recent requests are owed.
      else if (watermark !== null || now - q.runAt <= misfireMs) result.due.push(queuedRun(plan, q, now));
    }
    plan.queued = keep.length ? keep : null;
  }
  return result;
}

/**
 * The scheduled runs owed at `now` for occurrences after `from` whose publish time is after
 * `done`, by the misfire rule (see catchUp). Also what the live loop does when a timer fires far
 * too late (the process was suspended or starved): one late run, not a burst of them.
 */
export function owedSince(plan: JobPlan, from: number, done: number, now: number, misfireMs: number): CatchUp {
  const due: PlannedRun[] = [];
  const delayed: PlannedRun[] = [];
  const delay = delayMs(plan);
  let next: number | null = null;
  let t = planFloor(plan, from);
  let missed = 0;
  let latest: { o: number; p: number } | null = null;
  for (let budget = CATCH_UP_BUDGET; ; budget--) {
    if (budget === 0) {
      // A very long outage of a very frequent job: the exact count is not worth minutes of
      // start-up. Jump to the last stretch before now; `missed` is then a lower bound.
      t = Math.max(t, now - misfireMs - delay - 60_000);
      budget = CATCH_UP_BUDGET;
    }
    const o = occurrenceAfter(plan, t, true);
    if (o === null || o > now) {
      next = o;
      break;
    }
    t = o;
    const p = publishAt(plan, o);
    if (p <= done) continue;
    if (p > now) delayed.push(scheduledRun(plan, o, p));
    else if (now - p <= misfireMs) due.push(scheduledRun(plan, o, p, { lateByMs: now - p }));
    else {
      missed++;
      latest = { o, p }; // occurrences come in order: the last one is the latest
    }
  }
  if (latest) due.unshift(scheduledRun(plan, latest.o, latest.p, { missed, lateByMs: now - latest.p }));
  plan.cursor = Math.max(plan.cursor, plan.since, now);
  return { due, delayed, next };
}

/** The order for a cron_run (RunRequested) published at `now`. */
export function queuedRun(plan: JobPlan, q: { runId: string; runAt: number; payload: string | null }, now: number): PlannedRun {
  return {
    jobId: plan.job.id,
    runId: q.runId,
    occurrenceAt: q.runAt,
    scheduledAt: q.runAt,
    manual: true,
    payload: q.payload,
    missed: 0,
    lateByMs: Math.max(0, now - q.runAt),
  };
}
