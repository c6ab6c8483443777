import { timeSlicer } from '../../shared/timeSlice.ts';
import type { CronJob } from '../../shared/job/index.ts';
import { catchUp, type PlannedRun, type Watermark } from './catchUp.ts';
import { DELAYED, QUEUED, TICK, type Entry } from './firing.ts';
import { owedAtStart } from './owedBeforeChange.ts';
import type { JobPlan, ScheduleProjection } from './scheduleProjection.ts';

/** What the start sweep needs from the planner. */
export interface SweepContext {
  readonly projection: ScheduleProjection;
  /** The last watermark recorded before this start, if any. */
  readonly watermark: Watermark | null;
  readonly now: number;
  readonly misfireMs: number;
  /** Hands a run to the dispatcher. `plan`: the job's plan, or an earlier version it owes a run from. */
  enqueue(plan: { job: CronJob; since: number }, order: PlannedRun): void;
  /** The heap entry for one of the plan's instants. */
  entry(plan: JobPlan, kind: Entry['kind'], due: number, occurrence: number): Entry;
  /** Puts an entry on the heap (which fires nothing until the sweep is over). */
  push(e: Entry): void;
}

/**
 * Plans everything the rebuilt projection holds, once, when the planner starts: enqueues the runs
 * missed while no planner ran (and the skip records and owed runs of that time), puts what comes
 * later on the heap, and returns the number of runs enqueued as due. In time slices: a
 * million schedules take seconds, and the process must keep answering meanwhile.
 */
export async function startSweep(ctx: SweepContext): Promise<{ due: number }> {
  const { projection, watermark, now, misfireMs } = ctx;
  const slice = timeSlicer();
  let due = 0;
  for (const plan of projection.plans.values()) {
    await slice();
    const c = catchUp(plan, watermark, now, misfireMs);
    // An enable the last watermark does not cover: its skip record may not be out (its id makes a second one a no-op).
    const skipped = watermark && projection.skippedSince(plan, watermark.position);
    if (skipped) ctx.enqueue(plan, skipped);
    for (const order of c.due) {
      ctx.enqueue(plan, order);
      due++;
    }
    for (const order of c.delayed) ctx.push(ctx.entry(plan, DELAYED, order.scheduledAt, order.occurrenceAt));
    for (const q of plan.queued ?? []) ctx.push({ ...ctx.entry(plan, QUEUED, q.runAt, q.runAt), runId: q.runId });
    if (c.next !== null) ctx.push(ctx.entry(plan, TICK, c.next, c.next));
  }
  // Runs owed by versions the jobs had while no planner ran (deleted jobs' too), as they were then.
  for (const owed of projection.owed.values()) {
    await slice();
    for (const run of owedAtStart(owed, now, misfireMs)) {
      ctx.enqueue(run, run.order);
      due++;
    }
  }
  projection.owed.clear();
  return { due };
}
