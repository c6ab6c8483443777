import { runMetrics } from '../../shared/metrics.ts';
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

export const countSkip = () => runMetrics.executions.skipped.inc();
