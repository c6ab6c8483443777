import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import type { BusMessage, Bus } from '../../shared/bus/bus.ts';
import { EnvelopeError } from '../../shared/crypto/envelope.ts';
import { TestAnswerSchema, TestRunSchema, type TestRun } from '../../shared/gen/tock/v1/events_pb.ts';
import { openSecrets, targetOf, type Sealer, type TargetSettings } from '../../shared/job/index.ts';
import type { Logger } from '../../shared/log.ts';
import { testAnswerSubject } from '../../shared/subjects/executor.ts';
import { TEST_TIMEOUT_S } from '../../shared/topology.ts';
import { buildRequest, parseHeaderLines, splitUrlCredentials, type RequestSpec, type RunJob } from './buildRequest.ts';
import { signingOf } from './dueRunMessages.ts';
import type { FairGate } from './fairGate.ts';
import type { HttpCaller, HttpResult } from './httpCall.ts';
import { judge } from './judge.ts';

type Answer = MessageInitShape<typeof TestAnswerSchema>;

/** A secret shorter than this is not searched for in an answer: masking every "ab" would hide the answer, not the secret. */
export const MIN_MASKED = 4;
/** An answer shows at most this many headers, each value cut to VALUE_MAX characters. */
const HEADERS_MAX = 100;
const VALUE_MAX = 2000;
const MASK = '***';

/** The secrets a call of `job` sends (password, URL credentials, header values, the Basic and signing keys) that an answer must not show. */
export function secretsOf(job: RunJob, spec: RequestSpec): string[] {
  const url = splitUrlCredentials(job.url);
  const basic = /^Basic (.+)$/.exec(Object.entries(spec.headers).find(([name]) => name.toLowerCase() === 'authorization')?.[1] ?? '')?.[1];
  const values = [job.password, url.password, url.username && url.password ? `${url.username}:${url.password}` : '', basic ?? '', ...parseHeaderLines(job.httpHeaders).map(([, v]) => v), ...(spec.signing ?? []).map((k) => k.secret)];
  // Longest first, so a secret that contains another is masked whole.
  return [...new Set(values.filter((v) => typeof v === 'string' && v.length >= MIN_MASKED))].sort((a, b) => b.length - a.length);
}

export const maskAll = (text: string, secrets: readonly string[]) => secrets.reduce((t, s) => t.split(s).join(MASK), text);

/** The response's headers as the answer lists them: each value of a repeated header on its own, secrets masked. */
export function answerHeaders(headers: HttpResult['headers'], secrets: readonly string[]) {
  const out: { name: string; value: string }[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.push({ name, value: maskAll(v, secrets).slice(0, VALUE_MAX) });
  }
  return out.slice(0, HEADERS_MAX);
}

/** Pure: the answer to a test call from what it got, judged as a run would be, secrets masked. */
export function answerOf(testId: string, job: RunJob, spec: RequestSpec, result: HttpResult, server: string): Answer {
  const secrets = secretsOf(job, spec);
  const verdict = judge(result, job);
  return {
    testId,
    refused: '',
    succeeded: verdict.ok,
    httpStatus: result.httpStatus,
    executionTime: result.executionTime,
    error: maskAll(verdict.error, secrets),
    ip: result.ip,
    downloaded: BigInt(result.downloaded),
    headers: answerHeaders(result.headers, secrets),
    output: maskAll(result.output, secrets),
    server,
  };
}

export interface TestCallDeps {
  bus: Bus;
  caller: HttpCaller;
  gate: FairGate;
  log: Logger;
  serverName: string;
  userAgent: string;
  secrets?: Sealer;
}

/**
 * Test calls (cron_test): one call of a job's settings with the same request building, signing,
 * egress guard and judging as a run, within the account's share of this executor's calls (a test
 * never waits for a slot: it is refused). The answer goes back live on the bus; nothing is
 * published as an execution, so nothing is recorded or counted.
 */
export function createTestCalls(deps: TestCallDeps) {
  const { bus, caller, gate, log, serverName, userAgent, secrets } = deps;
  const refused = (testId: string, why: string, error: string): Answer => ({ testId, refused: why, error, server: serverName });

  async function call(test: TestRun & { target: NonNullable<TestRun['target']> }): Promise<Answer> {
    const t = test.target;
    const job = targetOf(t as unknown as TargetSettings) as RunJob;
    job.id = Number(t.jobId);
    let clear: RunJob;
    let spec: RequestSpec;
    try {
      clear = secrets ? openSecrets(job, secrets) : job;
      spec = buildRequest(clear, { runId: `test-${test.testId}`, scheduledAt: Date.now(), payload: null, signing: signingOf(test, secrets), test: true }, { userAgent });
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
      log.warn('test call: job secrets do not open', { accountId: String(t.accountId), error: error.message });
      return refused(test.testId, 'secrets', `job secrets: ${error.message}`);
    }
    spec.timeoutMs = Math.min(spec.timeoutMs, TEST_TIMEOUT_S * 1000);
    const accountId = Number(t.accountId);
    const release = gate.tryEnter(accountId);
    if (!release) {
      const { inFlight } = gate.load(accountId);
      return refused(test.testId, 'busy', `this account already has ${inFlight} calls in progress on the executor, its share`);
    }
    let result: HttpResult;
    try {
      result = await caller.call(spec, { once: true });
    } finally {
      release();
    }
    if (result.refused) {
      log.warn('test call target refused by egress policy', { accountId: String(t.accountId), ...result.refused });
      return refused(test.testId, 'egress', result.error);
    }
    return answerOf(test.testId, clear, spec, result, serverName);
  }

  return async function handleTest(msg: BusMessage): Promise<void> {
    // At most once: a test whose executor dies during the call is not made again; its caller's wait ends.
    await msg.ack();
    let test: TestRun;
    try {
      test = fromBinary(TestRunSchema, msg.data);
      if (!test.target || !test.testId) throw new Error('test call without a target or an id');
    } catch (error) {
      log.warn('undecodable test call dropped', { subject: msg.subject, error });
      return;
    }
    // Wall-clock time on both sides: the bound is on a real wait, not on the schedule.
    if (Date.now() > Number(test.expiresAtMs)) return;
    const answer = await call(test as TestRun & { target: NonNullable<TestRun['target']> });
    await bus.notify(testAnswerSubject(test.testId), toBinary(TestAnswerSchema, create(TestAnswerSchema, answer)));
  };
}
