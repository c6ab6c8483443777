import { compileSchedule, type JobSettings } from '../../shared/job/index.ts';
import type { Commands } from './commands.ts';
import type { JobsView } from './jobsView.ts';

/** What an execution's outcome (from the bus, executionConsumer.ts) does to its job. */
export function createExecutionOutcomes(view: JobsView, commands: Commands) {
  return {
    /**
     * Whether a success of this job could change anything (a failure count to reset, a one-time
     * job to stop): most cannot, and then the execution need not even be decoded.
     */
    successMatters(jobId: number): boolean {
      const entry = view.anyJob(jobId);
      if (!entry || entry.job.deleted) return false;
      if (entry.job.fail > 0) return true;
      const kind = scheduleKind(entry.job.settings, jobId);
      return kind === 'one-time' || kind === 'timestamp';
    },

    /** An execution's outcome (from the bus): counts consecutive failures, auto-disables, stops a done one-time job. */
    async recordExecution(jobId: number, runId: string, succeeded: boolean, manual: boolean): Promise<void> {
      const entry = view.anyJob(jobId);
      if (!entry || entry.job.deleted) return;
      const kind = manual ? null : scheduleKind(entry.job.settings, jobId);
      const oneTimeDone = kind === 'one-time' || kind === 'timestamp';
      // The common case, a success with nothing to reset, changes nothing: skip loading the stream.
      if (succeeded && entry.job.fail === 0 && !oneTimeDone) return;
      const result = await commands.job({ type: 'RecordExecution', id: jobId, runId, succeeded, oneTimeDone });
      await view.waitFor(result.position);
    },
  };
}

function scheduleKind(settings: JobSettings, jobId: number) {
  try {
    return compileSchedule(settings, jobId).kind;
  } catch {
    return null;
  }
}
