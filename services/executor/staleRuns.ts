/**
 * Cancel notices per job. A job change makes the runs planned before it stale: every run when the
 * planner had runs ahead (it publishes them again from the new state), only retries otherwise.
 * A retry is stale after any change, whether or not its first attempt was asked for by hand.
 * Forgotten after an hour (the longest wait before a retry).
 */
export function createStaleRuns() {
  const runs = new Map<number, number>();
  const retries = new Map<number, number>();
  const note = (map: Map<number, number>, jobId: number, at: number) => {
    map.set(jobId, Math.max(at, map.get(jobId) ?? 0));
    if (map.size > 100_000) {
      const horizon = Date.now() - 60 * 60_000;
      for (const [id, t] of map) if (t < horizon) map.delete(id);
    }
  };
  return {
    cancel(jobId: number, at: number, retriesOnly: boolean) {
      note(retries, jobId, at);
      if (!retriesOnly) note(runs, jobId, at);
    },
    isStale(jobId: number, plannedAt: number, manual: boolean, retry: boolean) {
      if (plannedAt <= 0) return false;
      if (retry) return plannedAt < (retries.get(jobId) ?? 0);
      return !manual && plannedAt < (runs.get(jobId) ?? 0);
    },
  };
}
