import { shownJob, type ExecutionFacts, type JobFacts, type Trigger } from './trigger.ts';

/**
 * `notifySkipped` (Tock's): a run not made on time for a reason Tock knows is told like a failure,
 * merged with the account's other notifications. It changes no count: a skipped run is neither a
 * failure nor a success, and a late run after downtime is counted by its own outcome.
 */

/** Why a skipped run was not made, in a sentence. */
export function skipSentence(reason: string | undefined, missed: number): string {
  if (reason === 'instances') return "the run was skipped: the job's instances limit was reached (its earlier runs were still in flight)";
  if (reason === 'fair_share') return "the run was skipped: the account's runs waiting on an executor reached its fair share";
  if (reason === 'account_disabled') return `${missed} scheduled run${missed === 1 ? ' was' : 's were'} not made while the account was disabled`;
  return 'the run was skipped';
}

/** Why a late run after downtime is told. */
export const missedSentence = (missed: number) =>
  `${missed} scheduled run${missed === 1 ? ' was' : 's were'} missed while Tock was down: this one late run stands for ${missed === 1 ? 'it' : 'them'}`;

/** Pure: the trigger of a skipped execution, or null (notifySkipped off, or the job silent). `fail`: the job's current count, unchanged. */
export function skipTrigger(job: JobFacts, execution: ExecutionFacts, fail: number, silent: boolean, now: number): Trigger | null {
  if (!job.notifySkipped || silent) return null;
  const missed = Math.max(1, execution.missed ?? 0);
  return {
    // Keyed by run: a redelivered execution is merged into the account's notification once.
    key: `${execution.runId}:skipped`,
    kind: 'skipped',
    reasons: [skipSentence(execution.skipReason, missed)],
    at: now,
    fail,
    job: shownJob(job),
    execution: { ...execution, output: '' },
  };
}
