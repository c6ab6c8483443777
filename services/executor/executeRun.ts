import type { MessageInitShape } from '@bufbuild/protobuf';
import { ExecutionOutcome, type DueRun, type ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { buildRequest, type RunJob } from './buildRequest.ts';
import type { HttpResult } from './httpCall.ts';
import { judge } from './judge.ts';

/** The job's request settings as the due run carries them (a snapshot taken when it was planned). */
export function runJobOf(run: DueRun): RunJob {
  const t = run.target!;
  return {
    id: Number(t.jobId),
    url: t.url,
    httpMethod: t.httpMethod as RunJob['httpMethod'],
    postData: t.postData,
    httpHeaders: t.httpHeaders,
    username: t.username,
    password: t.password,
    userAgent: t.userAgent,
    timeout: t.timeout,
    keyword: t.keyword,
    pattern: t.pattern,
  };
}

/** The due run's request: pure, so the exact bytes sent are testable without a network. */
export const requestFor = (run: DueRun, userAgent: string) =>
  buildRequest(runJobOf(run), { runId: run.runId, scheduledAt: Number(run.scheduledAt), payload: run.payload ?? null }, { userAgent });

type Execution = MessageInitShape<typeof ExecutionSchema>;

const base = (run: DueRun, server: string): Execution => ({
  runId: run.runId,
  jobId: run.target!.jobId,
  accountId: run.target!.accountId,
  time: BigInt(Math.floor(Number(run.scheduledAt) / 1000)),
  payload: run.payload,
  server,
  url: run.target!.url,
  manual: run.manual,
  missed: run.missed,
});

/** Pure: the execution event for a finished call, judged per DECISIONS 6. */
export function executionOf(run: DueRun, result: HttpResult, server: string): Execution {
  const verdict = judge(result, runJobOf(run));
  return {
    ...base(run, server),
    outcome: verdict.ok ? ExecutionOutcome.SUCCEEDED : ExecutionOutcome.FAILED,
    startTimeMs: BigInt(result.startTime),
    downloaded: BigInt(result.downloaded),
    httpStatus: result.httpStatus,
    error: verdict.error,
    output: result.output,
    ip: result.ip,
    executionTime: result.executionTime,
    lateByMs: run.lateByMs + BigInt(Math.max(0, result.startTime - Number(run.scheduledAt))),
  };
}

/** Pure: the execution event of a run skipped because `instances` runs of the job were in flight. */
export function skippedExecution(run: DueRun, server: string, now: number): Execution {
  return {
    ...base(run, server),
    outcome: ExecutionOutcome.SKIPPED,
    startTimeMs: BigInt(now),
    error: `skipped: ${run.target!.instances} run(s) of this job already in progress (instances = ${run.target!.instances})`,
  };
}

export const outcomeName = (outcome: ExecutionOutcome) =>
  outcome === ExecutionOutcome.SUCCEEDED ? 'succeeded' : outcome === ExecutionOutcome.SKIPPED ? 'skipped' : 'failed';
