// The executor's messages, pure: a due run read (its job, its request, its attempt), and the
// execution events and retry messages written from it. Nothing here touches the network or the bus.
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { DueRunSchema, ExecutionOutcome, SkipReason, type DueRun, type ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { targetOf, type TargetSettings } from '../../shared/job/index.ts';
import { maskUrl, openSecrets, type Sealer } from '../../shared/job/index.ts';
import { buildRequest, type RunJob } from './buildRequest.ts';
import type { HttpResult } from './httpCall.ts';
import { judge } from './judge.ts';
import type { SigningKey } from '../../shared/signing.ts';

/** The job's request settings as the due run carries them (a snapshot taken when it was planned). */
export function runJobOf(run: DueRun): RunJob {
  const t = run.target!;
  const job = targetOf(t as unknown as TargetSettings) as RunJob;
  job.id = Number(t.jobId);
  return job;
}

/**
 * The due run's request: pure, so the exact bytes sent are testable without a network. The job's
 * secrets travel sealed; they are opened here, for this request only (throws EnvelopeError when
 * this executor lacks the key).
 */
export function requestFor(run: DueRun, userAgent: string, secrets?: Sealer) {
  const job = runJobOf(run);
  const clear = secrets ? openSecrets(job, secrets) : job;
  return buildRequest(clear, { runId: run.runId, scheduledAt: Number(run.scheduledAt), payload: run.payload ?? null, attempt: run.attempt, signing: signingOf(run, secrets) }, { userAgent });
}

/** The account's signing keys; sealed like the job's secrets (opened here, for this request). */
export const signingOf = (run: Pick<DueRun, 'target'>, secrets?: Sealer): SigningKey[] | undefined =>
  run.target!.signingSecrets.length
    ? run.target!.signingSecrets.map((k) => ({ secret: secrets ? secrets.open(k.secret) : k.secret, validUntil: Number(k.validUntil) }))
    : undefined;

type Execution = MessageInitShape<typeof ExecutionSchema>;

/** Which attempt of its occurrence a due run is (planned runs carry 0: the first). */
export const attemptOf = (run: DueRun) => Math.max(1, run.attempt);

/**
 * The id of one attempt: the run id for the first, `<runId>#<n>` after. Executions and retry
 * messages carry it, so each attempt is logged and de-duplicated on its own, while the target
 * sees the occurrence's run id on every attempt.
 */
export const attemptId = (run: DueRun) => (run.attempt > 1 ? `${run.runId}#${run.attempt}` : run.runId);

/** When the run may fire: its instant, or for a retry the end of its backoff. */
export const fireAt = (run: DueRun) => Math.max(Number(run.scheduledAt), Number(run.notBefore));

/** Pure: the next attempt of a failed run, due at `notBefore` (the same occurrence, request and plan). */
export function retryOf(run: DueRun, notBefore: number): DueRun {
  return create(DueRunSchema, { ...run, attempt: attemptOf(run) + 1, notBefore: BigInt(notBefore), lateByMs: 0n });
}

/**
 * Every field of the event, written out in one literal: a spread of a shared base lands the copy
 * in a slow object shape, which every run on the hot path would pay for.
 */
function execution(run: DueRun, server: string, outcome: ExecutionOutcome, startTimeMs: number, error: string, result?: HttpResult, skipReason = SkipReason.UNSPECIFIED): Execution {
  const t = run.target!;
  const scheduledAt = Number(run.scheduledAt);
  return {
    runId: attemptId(run),
    attempt: attemptOf(run),
    willRetry: false,
    jobId: t.jobId,
    accountId: t.accountId,
    time: BigInt(Math.floor(scheduledAt / 1000)),
    payload: run.payload,
    server,
    // Execution records are kept and shown: never a credential in them.
    url: maskUrl(t.url),
    manual: run.manual,
    missed: run.missed,
    outcome,
    startTimeMs: BigInt(startTimeMs),
    error,
    downloaded: BigInt(result?.downloaded ?? 0),
    httpStatus: result?.httpStatus ?? 0,
    output: result?.output ?? '',
    ip: result?.ip ?? '',
    executionTime: result?.executionTime ?? 0,
    lateByMs: result ? run.lateByMs + BigInt(Math.max(0, result.startTime - fireAt(run))) : 0n,
    skipReason,
  };
}

/** Pure: the execution event for a finished call, judged per docs/api.md (What every call to your URL carries). */
export function executionOf(run: DueRun, result: HttpResult, server: string): Execution {
  const verdict = judge(result, runJobOf(run));
  const outcome = verdict.ok ? ExecutionOutcome.SUCCEEDED : ExecutionOutcome.FAILED;
  return execution(run, server, outcome, result.startTime, verdict.error, result);
}

/** Pure: the execution event of a run that could not be made (its secrets do not open here). */
export const failedExecution = (run: DueRun, server: string, now: number, error: string): Execution => execution(run, server, ExecutionOutcome.FAILED, now, error);

/** Pure: the execution event of a run skipped because `instances` runs of the job were in flight. */
export function skippedExecution(run: DueRun, server: string, now: number): Execution {
  const { instances } = run.target!;
  const error = `skipped: ${instances} run(s) of this job already in progress (instances = ${instances})`;
  return execution(run, server, ExecutionOutcome.SKIPPED, now, error, undefined, SkipReason.INSTANCES);
}

/** Pure: the execution event of a run skipped because its account's runs waiting here reached their limit. */
export function fairShareSkip(run: DueRun, server: string, now: number, load: { inFlight: number; waiting: number }): Execution {
  const error = `skipped: this account already has ${load.inFlight} calls in progress and ${load.waiting} runs waiting on this executor (its fair share)`;
  return execution(run, server, ExecutionOutcome.SKIPPED, now, error, undefined, SkipReason.FAIR_SHARE);
}

/**
 * Pure: the skip record the planner asked for (`run.skip`): the occurrences of a job whose
 * account was disabled, `missed` of them, the latest at the run's time. Nothing was called.
 */
export function plannedSkip(run: DueRun, server: string, now: number): Execution {
  const n = Math.max(1, run.missed);
  const error = `skipped: the account was disabled; ${n} scheduled run${n === 1 ? '' : 's'} of this job not made`;
  return execution(run, server, ExecutionOutcome.SKIPPED, now, error, undefined, run.skip);
}

/**
 * Pure: a retry that found `instances` runs of its job in flight is not made (a retry never
 * overlaps later runs beyond `instances`), and its occurrence ends failed.
 */
export function retryNotMade(run: DueRun, server: string, now: number): Execution {
  const { instances } = run.target!;
  const error = `attempt ${attemptOf(run)} not made: ${instances} run(s) of this job already in progress (instances = ${instances})`;
  return execution(run, server, ExecutionOutcome.FAILED, now, error);
}

export const outcomeName = (outcome: ExecutionOutcome) =>
  outcome === ExecutionOutcome.SUCCEEDED ? 'succeeded' : outcome === ExecutionOutcome.SKIPPED ? 'skipped' : 'failed';
