import { create } from '@bufbuild/protobuf';
import { ExecutionOutcome, ExecutionSchema, type Execution } from '../../../shared/gen/tock/v1/events_pb.ts';

/** 2024-10-16T08:30:00Z */
export const T0 = 1_729_067_400n;

export type ExecutionInit = Partial<Omit<Execution, '$typeName' | '$unknown'>>;

/** A plausible successful run of job 1 of account 1; override what a test is about. */
export function execution(over: ExecutionInit = {}): Execution {
  const time = over.time ?? T0;
  const jobId = over.jobId ?? 1n;
  return create(ExecutionSchema, {
    runId: `${jobId}:${time * 1000n}`,
    jobId,
    accountId: 1n,
    outcome: ExecutionOutcome.SUCCEEDED,
    time,
    startTimeMs: time * 1000n + 120n,
    downloaded: 2n,
    httpStatus: 200,
    error: '',
    output: 'ok',
    ip: '203.0.113.5',
    server: 'tock-1',
    executionTime: 0.25,
    url: 'https://example.com/hook',
    ...over,
  });
}

export const failure = (over: ExecutionInit = {}) =>
  execution({ outcome: ExecutionOutcome.FAILED, httpStatus: 503, error: 'HTTP 503', output: 'Service Unavailable', ...over });
