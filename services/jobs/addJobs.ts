import { AppError, inside } from '../../shared/errors.ts';
import { streamName, WrongExpectedRevisionError, type EventStore, type StreamAppend } from '../../shared/eventStore/eventStore.ts';
import { decideJob, evolveJob, type CronJob, type JobEvent, type SettingsInput } from '../../shared/job/index.ts';
import { slicedAll, timeSlicer } from '../../shared/timeSlice.ts';
import type { Account } from './account.ts';
import { APPEND_CHUNK, checkBatchSize, WRITES_IN_FLIGHT } from './batchLimit.ts';
import { batchHash, batchStream, checkIdempotencyKey, readBatch, recordAnswer, recordBatch, sameBatch, type BatchRecord } from './batchRecord.ts';
import type { Commands } from './commands.ts';
import { requestRunCommand, type ExtraRun } from './extraRun.ts';
import type { JobLookups } from './jobReads.ts';
import type { JobSlots } from './jobSlots.ts';
import { jobPoints, type JobEntry, type JobsView } from './jobsView.ts';

type JobCreated = Extract<JobEvent, { type: 'JobCreated' }>;

/**
 * A store that fails while a batch is written: error 1 with 503 (worth a retry), saying what a
 * retry does. Errors of ours (4xx) pass as they are.
 */
async function storeFailure<T>(fn: () => Promise<T>, keyed: boolean): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError && error.httpStatus < 500) throw error;
    throw new AppError(
      'UNAVAILABLE',
      keyed
        ? 'the event store failed before the batch was completely written; send it again with the same idempotency key to complete it'
        : 'the event store failed part way: the batch may be partly written; check cron_list before sending it again (a batch sent with an X-Idempotency-Key is completed by a retry, without duplicates)',
      { cause: error },
    );
  }
}

/** cron_add and cron_batch_add: new jobs, in batches. `account` checks the caller and answers the account. */
export function createAddJobs(store: EventStore, view: JobsView, commands: Commands, slots: JobSlots, account: (id: number) => Account, { checkGroup }: JobLookups) {
  const { now, ids, settle } = commands;
  const runJobCommand = commands.job;
  // Requests with one idempotency key take turns in this process: the second finds the batch the
  // first wrote instead of racing it to create the same job streams.
  const turns = new Map<string, Promise<unknown>>();
  const inTurn = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const mine = (turns.get(key) ?? Promise.resolve()).catch(() => undefined).then(fn);
    turns.set(key, mine);
    const forget = () => turns.get(key) === mine && turns.delete(key);
    mine.then(forget, forget);
    return mine;
  };

  return {
    /**
     * Creates a batch of jobs. With an idempotency key the batch is recorded first (batchRecord.ts)
     * and a retry completes it under the same ids, or answers the answer recorded for it
     * (`answer`, with no entries); without one, a store failure part way leaves the jobs written
     * so far, and the error says so.
     */
    addJobs(accountId: number, inputs: SettingsInput[], runs: (ExtraRun | null)[], idempotencyKey: string | null = null): Promise<{ entries: JobEntry[]; answer?: string }> {
      if (idempotencyKey === null) return add(accountId, inputs, runs, null);
      return inTurn(`${accountId}/${idempotencyKey}`, () => add(accountId, inputs, runs, idempotencyKey));
    },

    /** Keeps the first answer made for a batch sent with an idempotency key; returns the one kept. */
    async recordBatchAnswer(accountId: number, idempotencyKey: string, answer: string): Promise<string> {
      account(accountId);
      checkIdempotencyKey(idempotencyKey);
      return storeFailure(() => recordAnswer(store, batchStream(accountId, idempotencyKey), answer, now()), true);
    },
  };

  async function add(accountId: number, inputs: SettingsInput[], runs: (ExtraRun | null)[], idempotencyKey: string | null): Promise<{ entries: JobEntry[]; answer?: string }> {
    const owner = account(accountId);
    if (inputs.length === 0) throw new AppError('MISSING_PARAMETER', 'at least one cron job is required', { field: ['data'] });
    checkBatchSize(inputs.length, 'data');
    let stream: string | null = null;
    let record: BatchRecord | null = null;
    const hash = batchHash({ inputs, runs });
    if (idempotencyKey !== null) {
      checkIdempotencyKey(idempotencyKey);
      stream = batchStream(accountId, idempotencyKey);
      record = await storeFailure(() => readBatch(store, stream!), true);
      if (record) sameBatch(record, hash);
      if (record?.answer !== undefined) return { entries: [], answer: record.answer };
    }
    // A quick refusal from the view; the reservation below is what holds under concurrency.
    if (!record && owner.jobLimit > 0 && view.countJobs(accountId) + inputs.length > owner.jobLimit) {
      throw new AppError('LIMIT_EXCEEDED', `the account may have at most ${owner.jobLimit} cron jobs`);
    }
    // Errors name the element in batches of two or more; the gateway places the only one of a batch of one.
    const element = (i: number) => (inputs.length > 1 || runs.length > 1 ? ['data', i] : []);
    // A batch of costly schedules is validated and written in slices: other requests get turns,
    // the first one right away (decoding and hashing the batch took this turn already).
    const slice = timeSlicer({ yieldFirst: true });
    // Decide every element before writing anything: a batch that fails validation changes nothing.
    // A new job's settings do not depend on its id, so each is decided once, here, before ids
    // are taken (a refused batch takes none), and recorded under the id it gets.
    const created: JobCreated[] = [];
    for (const [i, input] of inputs.entries()) {
      await slice();
      inside(element(i), () => {
        checkGroup(accountId, input);
        const [event] = decideJob({ type: 'CreateJob', id: 0, accountId, input, defaultTimezone: owner.timezone }, null, now());
        if (event?.type !== 'JobCreated') throw new Error(`CreateJob decided ${event?.type ?? 'nothing'}`);
        created[i] = event;
        const order = runs[i];
        if (order) requestRunCommand(accountId, 0, order, event.data.settings.httpMethod, now());
      });
    }
    /** Job `i` of the batch as created under `id`: the event decided before ids were taken. */
    const createdAs = (i: number, id: number): JobCreated => {
      const decided = created[i];
      if (!decided) throw new Error(`the batch record has more ids than the batch has jobs (${inputs.length})`);
      return { type: 'JobCreated', data: { ...decided.data, id } };
    };
    return storeFailure(async () => {
      let retry = record !== null;
      if (!record) {
        // Counted when the batch is first sent; a retry only completes what was accepted then.
        await slots.reserve(accountId, inputs.length, owner.jobLimit, () => view.countJobs(accountId));
        const allocated = await ids.allocate('cronjob', inputs.length);
        record = stream ? await recordBatch(store, stream, { ids: allocated, hash }, now()) : { ids: allocated, hash };
        // A concurrent request with the same key recorded first: complete its batch, with its slots.
        retry = record.ids !== allocated;
        if (retry) await slots.release(accountId, inputs.length);
        sameBatch(record, hash);
      }
      const jobIds = record.ids;
      // Each job as this batch created it, whatever happened to it since (edited, deleted): what
      // the gateway's answer is made from, until that answer is recorded (recordBatchAnswer).
      const answers: CronJob[] = [];
      /** One job, on its own: what a retry does, reading back what an earlier attempt wrote. */
      const writeOne = async (i: number) => {
        const id = jobIds[i]!;
        let written = await store.readStream(streamName('cronjob', id));
        let position: bigint | null = null;
        let first = written[0] as unknown as JobEvent | undefined;
        if (!first) {
          first = createdAs(i, id);
          try {
            position = (await runJobCommand({ type: 'CreateJob', id, accountId, input: inputs[i]!, defaultTimezone: owner.timezone }, { state: null, revision: 'no_stream', events: [first] })).position;
          } catch (error) {
            // Another jobs replica completing the same batch created it first: read back what it wrote.
            written = await store.readStream(streamName('cronjob', id));
            first = written[0] as unknown as JobEvent | undefined;
            if (!first) throw error;
          }
        }
        answers[i] = evolveJob(null, first)!;
        const order = runs[i];
        if (order && !written.some((e) => e.type === 'RunRequested')) position = (await runJobCommand(requestRunCommand(accountId, id, order, answers[i].settings.httpMethod, now()))).position;
        return position;
      };
      /**
       * The first attempt: every job is a new stream, created with its run order (if any) in one
       * append per chunk of streams, so a batch costs a few commits instead of one or two per job.
       */
      const writeNew = async () => {
        const positions: (bigint | null)[] = [];
        for (let from = 0; from < jobIds.length; from += APPEND_CHUNK) {
          const chunk: StreamAppend[] = [];
          const to = Math.min(jobIds.length, from + APPEND_CHUNK);
          for (let i = from; i < to; i++) {
            await slice();
            const id = jobIds[i]!;
            const first = createdAs(i, id);
            const job = evolveJob(null, first)!;
            answers[i] = job;
            const order = runs[i];
            const events: JobEvent[] = order ? [first, ...decideJob(requestRunCommand(accountId, id, order, job.settings.httpMethod, now()), job, now())] : [first];
            chunk.push({ stream: streamName('cronjob', id), events: events.map((e) => ({ type: e.type, data: e.data, metadata: { accountId } })), expectedRevision: 'no_stream' });
          }
          try {
            positions.push(...(await store.appendMany(chunk)).map((r) => r.position));
          } catch (error) {
            // Taken meanwhile: only another replica completing this batch under its key writes
            // these ids; what it wrote is read back, job by job.
            if (!(error instanceof WrongExpectedRevisionError)) throw error;
            for (let i = from; i < to; i++) positions.push(await writeOne(i));
          }
        }
        return positions;
      };
      await settle(retry ? await slicedAll(jobIds.length, writeOne, WRITES_IN_FLIGHT, slice) : await writeNew());
      // The state folded from the stream's first event: revision 0.
      return { entries: answers.map((job) => ({ job, points: jobPoints(job), revision: 0 })) };
    }, idempotencyKey !== null);
  }
}
