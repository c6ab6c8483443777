import type { RunCancel } from '../../shared/topology.ts';

/** The part of a due run the staleness test reads. */
export interface StaleCheck {
  jobId: number;
  plannedAt: number;
  planSince: number;
  occurrenceAt: number;
  manual: boolean;
  retry: boolean;
}

/**
 * Cancel notices per job. A job change makes stale the first attempts of the occurrences after the
 * notice's boundary that were planned from an earlier version of the job: the planner publishes
 * those again from the new state (or not at all, the job paused or deleted). The test is by plan
 * version, not by when a run was put on the bus, so a planner replica that publishes from an
 * out-of-date view after the notice is caught too, and a run of an occurrence due before the
 * change, still held here, keeps its one call. A retry is stale after any change, whether or not
 * its first attempt was asked for by hand. Forgotten after an hour (the longest wait before a retry).
 */
export function createStaleRuns() {
  const jobs = new Map<number, { before: number; changes: { since: number; from: number }[] }>();
  return {
    cancel(notice: RunCancel) {
      const job = jobs.get(notice.jobId) ?? { before: 0, changes: [] };
      job.before = Math.max(job.before, notice.before);
      // Replicas send one notice each for a change: the lower boundary holds, since every
      // occurrence after it is published again by the replica that sent it.
      const same = job.changes.find((c) => c.since === notice.since);
      if (same) same.from = Math.min(same.from, notice.from);
      else job.changes = [...job.changes, { since: notice.since, from: notice.from }].slice(-CHANGES_KEPT);
      jobs.set(notice.jobId, job);
      if (jobs.size > 100_000) {
        const horizon = Date.now() - 60 * 60_000;
        for (const [id, j] of jobs) if (j.before < horizon) jobs.delete(id);
      }
    },
    isStale(run: StaleCheck) {
      const job = jobs.get(run.jobId);
      if (!job) return false;
      if (run.retry) return run.plannedAt > 0 && run.plannedAt < job.before;
      return !run.manual && job.changes.some((c) => run.planSince < c.since && run.occurrenceAt > c.from);
    },
  };
}

/** Changes remembered per job: a run is planned from a view at most this many changes old. */
const CHANGES_KEPT = 8;
