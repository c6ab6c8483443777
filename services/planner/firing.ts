import { owedSince, queuedRun, scheduledRun, type PlannedRun } from './catchUp.ts';
import { isRunnableAt, publishAt, takesQueuedRuns } from './occurrences.ts';
import { nextTick, type JobPlan, type ScheduleProjection } from './scheduleProjection.ts';

/** An occurrence to commit (and publish unless delayed), a delayed run to publish, or a queued cron_run. */
export const TICK = 0;
export const DELAYED = 1;
export const QUEUED = 2;
export interface Entry {
  /** When the heap fires it: `due` minus the lead. */
  at: number;
  /** When the run is due. */
  due: number;
  jobId: number;
  version: number;
  kind: typeof TICK | typeof DELAYED | typeof QUEUED;
  occurrence: number;
  runId: string | null;
}

export function entryOf(plan: JobPlan, kind: Entry['kind'], due: number, occurrence: number, leadMs: number): Entry {
  return { at: due - leadMs, due, jobId: plan.job.id, version: plan.version, kind, occurrence, runId: null };
}

/** The heap's staleness test: false once the entry's job moved on (re-planned, deleted, queued run taken). */
export function isCurrentEntry(projection: ScheduleProjection, e: Entry): boolean {
  const plan = projection.get(e.jobId);
  if (!plan) return false;
  if (e.kind === TICK) return plan.version === e.version;
  if (e.kind === QUEUED) return plan.queued?.some((q) => q.runId === e.runId) ?? false;
  return true;
}

/** What firing an entry needs from the planner. */
export interface FireContext {
  readonly misfireMs: number;
  readonly leadMs: number;
  /** Puts a follow-up entry on the heap. */
  push(e: Entry): void;
  /** Hands a run to the dispatcher. */
  enqueue(plan: JobPlan, order: PlannedRun): void;
}

/** Fires one due (and current) entry at `now`: enqueues its run and pushes what follows it. */
export function fireEntry(ctx: FireContext, projection: ScheduleProjection, e: Entry, now: number) {
  const { misfireMs, leadMs } = ctx;
  const plan = projection.get(e.jobId)!;
  if (e.kind === TICK) {
    const p = publishAt(plan, e.occurrence);
    if (now - p > misfireMs) {
      // Far too late: the process was suspended or starved. The rule after downtime applies:
      // one late run for what was missed, not a burst of every occurrence since.
      const c = owedSince(plan, e.occurrence - 1, e.occurrence - 1, now, misfireMs);
      for (const order of c.due) ctx.enqueue(plan, order);
      for (const order of c.delayed) ctx.push(entryOf(plan, DELAYED, order.scheduledAt, order.occurrenceAt, leadMs));
      if (c.next !== null) ctx.push(entryOf(plan, TICK, c.next, c.next, leadMs));
      return;
    }
    plan.cursor = Math.max(plan.cursor, e.occurrence);
    if (p <= now + leadMs) ctx.enqueue(plan, scheduledRun(plan, e.occurrence, p));
    else ctx.push(entryOf(plan, DELAYED, p, e.occurrence, leadMs));
    const next = nextTick(plan);
    if (next !== null) ctx.push(entryOf(plan, TICK, next, next, leadMs));
  } else if (e.kind === DELAYED) {
    // The occurrence has happened; its delayed run still needs the job runnable when it runs.
    if (isRunnableAt(plan.job, Math.max(now, e.due))) ctx.enqueue(plan, scheduledRun(plan, e.occurrence, e.due));
  } else {
    const q = plan.queued?.find((r) => r.runId === e.runId);
    if (!q) return;
    projection.dequeue(plan, q.runId);
    if (takesQueuedRuns(plan.job)) ctx.enqueue(plan, { ...queuedRun(plan, q, now), lateByMs: 0 });
  }
}
