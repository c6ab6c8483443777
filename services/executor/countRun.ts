import { SkipReason, type DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import { runMetrics, skipMetrics } from '../../shared/metrics.ts';
import { SKIP_REASON_NAMES } from '../../shared/skipReasons.ts';
import type { HttpResult } from './httpCall.ts';

/** Counted once the execution is published, so a run redelivered after a bus failure counts once. */
export function countRun(succeeded: boolean, lateByMs: number, result: HttpResult) {
  if (succeeded) {
    runMetrics.executions.succeeded.inc();
    runMetrics.targetDuration.succeeded.observe(result.executionTime);
  } else {
    runMetrics.executions.failed.inc();
    runMetrics.targetDuration.failed.observe(result.executionTime);
  }
  runMetrics.lateness.observe(lateByMs / 1000);
}

/** A retry not made (its job's `instances` in flight): its occurrence ends failed, and counts so. */
export const countNotMade = () => runMetrics.executions.failed.inc();

/** A skip record published: `runs` occurrences not made for `reason` (more than one for an account disabled a while). */
export function countSkip(reason: Exclude<SkipReason, SkipReason.UNSPECIFIED>, runs = 1) {
  runMetrics.executions.skipped.inc();
  skipMetrics.skipped[SKIP_REASON_NAMES[reason]].inc(runs);
}

/**
 * The late run after downtime stands for `missed` occurrences: counted once, with its first
 * attempt's event (retries carry the same count; a skip record's count is its own reason's).
 */
export function countMissed(run: DueRun) {
  if (run.missed > 0 && run.attempt <= 1 && run.skip === SkipReason.UNSPECIFIED) skipMetrics.missed.inc(run.missed);
}

/** A run left uncalled by a starved executor (the bus redelivers it): late, and counted so. */
export const countLapsed = () => skipMetrics.lapsed.inc();
