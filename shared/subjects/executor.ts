import type { Outcome } from '../topology.ts';

/**
 * The subjects only executors publish on (see deploy/k8s/base/nats.conf). A module of their own so
 * that `npm run depcheck` keeps every other service from publishing executions.
 */

/** An execution, stream EXECUTIONS; payload tock.v1.Execution, message id = attempt id (the run id for a first attempt). */
export const executionSubject = (accountId: number, jobId: number, outcome: Outcome) => `tock.executions.${accountId}.${jobId}.${outcome}`;

/**
 * An attempt after a failed call, put on the bus by the executor that made it. A subject of its
 * own, so an executor may publish retries without the right to plan runs.
 */
export const retrySubject = (jobId: number) => `tock.runs.retry.${jobId}`;

/** The answer to a test call (cron_test): a live notice, in no stream; payload tock.v1.TestAnswer. */
export const testAnswerSubject = (testId: string) => `tock.tests.answer.${testId}`;
