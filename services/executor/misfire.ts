import type { DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import { attemptOf, fireAt } from './dueRunMessages.ts';
import type { createStaleRuns } from './staleRuns.ts';

/**
 * The misfire rule where an overloaded executor meets it (the planner applies it after downtime,
 * catchUp.ts): a scheduled first attempt reached more than `misfireMs` after its instant is not
 * made when its job's next run is due already, because that run stands for it. So a job late by
 * more than the threshold ends with one late run, the latest, as after downtime, and a backlog
 * drains at the cost of a skip record per occurrence instead of a call.
 *
 * Made anyway, late: a job with no next run due yet (a daily job keeps its one run), a cron_run,
 * a retry (its occurrence was made once already), the planner's own late run after downtime (it
 * carries no next), and a run whose next one a job change made stale (that one is planned again
 * from the new state, or not at all, so it cannot stand for this one).
 */
export function collapsesIntoNext(run: DueRun, now: number, misfireMs: number, stale: ReturnType<typeof createStaleRuns>): boolean {
  const next = Number(run.nextDueAt);
  if (next === 0 || next > now || run.manual || attemptOf(run) > 1) return false;
  if (now - fireAt(run) <= misfireMs) return false;
  // The next occurrence is at or before its due instant: taking the instant errs toward calling.
  return !stale.isStale({ jobId: Number(run.target!.jobId), plannedAt: Number(run.plannedAt), planSince: Number(run.planSince), occurrenceAt: next, manual: false, retry: false });
}
