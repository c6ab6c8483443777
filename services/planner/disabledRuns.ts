import { scheduledRunId, type PlannedRun } from './catchUp.ts';
import { STATUS } from '../../shared/job/index.ts';
import { isScheduled, occurrenceAfter, type JobPlan } from './occurrences.ts';

/** Occurrences counted one by one; past this many the rest of the span is estimated from their pace. */
const COUNT_BUDGET = 10_000;

/**
 * The skip record of a job whose account was disabled from `from` to `to` (pure): its occurrences
 * in (from, to] were never planned, and are recorded once the account is enabled again as one
 * skipped run standing for all of them (`missed`), at the latest one's time. The run id is the same
 * in every planner replica, so the bus keeps one. Null when the job had nothing due then (or is
 * not scheduled now: the count follows the job as it is at the enable).
 *
 * A very frequent job disabled for long is counted exactly up to COUNT_BUDGET occurrences and
 * estimated past them (the first stretch's pace over the whole span), so enabling an account with
 * many per-second jobs costs milliseconds, not minutes.
 */
export function skippedWhileDisabled(plan: JobPlan, from: number, to: number): PlannedRun | null {
  if (!isScheduled(plan.job) || to <= from) return null;
  // From `from`, not from the plan's last re-plan: rebuilt after the enable, a plan starts there.
  const { job } = plan;
  const start = job.status === STATUS.PAUSED && job.pausedUntil !== null ? Math.max(from, job.pausedUntil - 1) : from;
  let t = start;
  let count = 0;
  let latest: number | null = null;
  for (;;) {
    const o = occurrenceAfter(plan, t);
    if (o === null || o > to) break;
    count++;
    latest = t = o;
    if (count === COUNT_BUDGET) {
      const gap = Math.max(1, (t - start) / COUNT_BUDGET);
      count = Math.max(count, Math.floor((to - start) / gap));
      // The latest occurrence: looked for over the last few gaps before `to` only.
      for (let o2 = occurrenceAfter(plan, Math.max(t, to - 16 * gap)); o2 !== null && o2 <= to; o2 = occurrenceAfter(plan, o2)) latest = o2;
      break;
    }
  }
  if (latest === null) return null;
  return {
    jobId: plan.job.id,
    runId: `${scheduledRunId(plan.job.id, latest)}:account-disabled`,
    occurrenceAt: latest,
    scheduledAt: latest,
    manual: false,
    payload: null,
    missed: count,
    lateByMs: 0,
    skip: true,
  };
}
