import type { RunCancel } from '../topology.ts';

/**
 * The subjects only the planner publishes on (its NATS user may publish nothing else; see
 * deploy/k8s/base/nats.conf). A module of their own so that `npm run depcheck` keeps every other
 * service from planning runs.
 */

/** A due run, stream RUNS; payload tock.v1.DueRun. */
export const dueRunSubject = (jobId: number) => `tock.runs.due.${jobId}`;

/** A cancel notice, stream CANCELS: which runs of the job a change made stale (see RunCancel). */
export const runCancelSubject = (jobId: number) => `tock.runs.cancel.${jobId}`;
export const encodeCancel = (c: RunCancel) => new TextEncoder().encode(JSON.stringify(c));
