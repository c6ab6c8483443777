import { randomUUID } from 'node:crypto';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import { TestAnswerSchema, TestRunSchema, type TestAnswer } from '../../shared/gen/tock/v1/events_pb.ts';
import { decideJob, maskUrl, resolveSettings, sealSecrets, targetOf, type JobEvent, type JobSettings, type Sealer, type SettingsInput } from '../../shared/job/index.ts';
import type { Logger } from '../../shared/log.ts';
import { signingKeys } from '../../shared/signing.ts';
import { testRunSubject } from '../../shared/subjects/jobs.ts';
import { TEST_ANSWER_SUBJECTS, TEST_PICKUP_MS, TEST_TIMEOUT_S, testIdOfAnswer } from '../../shared/topology.ts';
import type { JobsService } from './jobsService.ts';

/** Past the longest test call, the answer's way back over the bus. */
const ANSWER_SLACK_MS = 2000;

export interface TestRunsOptions {
  bus?: Bus;
  secrets?: Sealer;
  useCases: Pick<JobsService, 'account' | 'getJob'>;
  clock: Clock;
  log: Logger;
}

/** An executor's refusal, as the API tells it: the parameter when one is to blame, otherwise what to do. */
function refusal(answer: TestAnswer): AppError {
  switch (answer.refused) {
    case 'egress':
      return new AppError('INVALID_PARAMETER', answer.error, { field: ['url'] });
    case 'busy':
      return new AppError('RATE_LIMITED', answer.error);
    default:
      return new AppError('INTERNAL', `the test call could not be made: ${answer.error}`);
  }
}

/**
 * cron_test in the jobs service: the settings checked as cron_add (no id) or cron_edit (an id)
 * would check them, but nothing written; their call asked of an executor over the bus (secrets
 * sealed, as in a due run, with the account's signing keys) and its answer awaited.
 */
export function createTestRuns(options: TestRunsOptions) {
  const { bus, secrets, useCases, clock, log } = options;
  const pending = new Map<string, (answer: TestAnswer) => void>();
  let subscription: { unsubscribe(): Promise<void> } | undefined;

  /** The settings a test calls: validated, with the account's signing keys. */
  function target(accountId: number, id: number, input: SettingsInput): { settings: JobSettings; keys: ReturnType<typeof signingKeys> } {
    const owner = useCases.account(accountId);
    const now = clock.now();
    if (id) return { settings: resolveSettings(useCases.getJob(accountId, id).job.settings, input, id, now), keys: signingKeys(owner.signing, now) };
    const [created] = decideJob({ type: 'CreateJob', id: 0, accountId, input, defaultTimezone: owner.timezone }, null, now) as Extract<JobEvent, { type: 'JobCreated' }>[];
    return { settings: created!.data.settings, keys: signingKeys(owner.signing, now) };
  }

  return {
    /** Listens for the executors' answers (one subscription for every test of this replica). */
    async start() {
      if (!bus) return;
      subscription = await bus.subscribe(TEST_ANSWER_SUBJECTS, (subject, data) => {
        const resolve = pending.get(testIdOfAnswer(subject));
        if (!resolve) return;
        try {
          resolve(fromBinary(TestAnswerSchema, data));
        } catch (error) {
          log.warn('undecodable test answer dropped', { subject, error });
        }
      });
    },

    async stop() {
      await subscription?.unsubscribe();
      subscription = undefined;
    },

    async testJob(accountId: number, id: number, input: SettingsInput): Promise<{ answer: TestAnswer; url: string }> {
      const { settings, keys } = target(accountId, id, input);
      if (!bus || !subscription) throw new AppError('UNAVAILABLE', 'test calls go to an executor over the bus, and this jobs service has none');
      const sealed = secrets ? sealSecrets(settings, secrets) : settings;
      const testId = randomUUID();
      const message = create(TestRunSchema, {
        testId,
        target: {
          jobId: BigInt(id),
          accountId: BigInt(accountId),
          ...targetOf(sealed),
          signingSecrets: keys.map((k) => ({ secret: secrets ? secrets.seal(k.secret) : k.secret, validUntil: BigInt(k.validUntil) })),
        },
        // Wall-clock time, as the executor reads it: the bound is on a real wait.
        expiresAtMs: BigInt(Date.now() + TEST_PICKUP_MS),
      });
      const waitMs = TEST_PICKUP_MS + Math.min(settings.timeout, TEST_TIMEOUT_S) * 1000 + ANSWER_SLACK_MS;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answered = new Promise<TestAnswer>((resolve, reject) => {
        timer = setTimeout(() => reject(new AppError('UNAVAILABLE', `no executor answered the test call within ${Math.round(waitMs / 1000)} s; try again`)), waitMs);
        pending.set(testId, resolve);
      });
      try {
        await bus.publish(testRunSubject(accountId), toBinary(TestRunSchema, message), { msgId: testId });
        const answer = await answered;
        if (answer.refused) throw refusal(answer);
        return { answer, url: maskUrl(settings.url) };
      } finally {
        clearTimeout(timer);
        pending.delete(testId);
      }
    },
  };
}

export type TestRuns = ReturnType<typeof createTestRuns>;
