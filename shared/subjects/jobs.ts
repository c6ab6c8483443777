/**
 * The subject only the jobs service publishes on (see deploy/k8s/base/nats.conf). A module of its
 * own so that `npm run depcheck` keeps every other service from asking executors for test calls.
 */

/** A test call of a job's settings (cron_test), stream RUNS; payload tock.v1.TestRun, message id = test id. */
export const testRunSubject = (accountId: number) => `tock.runs.test.${accountId}`;
