import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.ts';
import { AppError, inside } from '../../shared/errors.ts';
import { streamName, type EventStore } from '../../shared/eventStore/eventStore.ts';
import { decideOn, type Decided } from '../../shared/eventStore/handleCommand.ts';
import {
  compileSchedule,
  decideJob,
  defaultSettings,
  evolveJob,
  jobDecider,
  resolveSettings,
  type CronJob,
  type JobCommand,
  type JobEvent,
  type JobSettings,
  type JobState,
  type SettingsInput,
} from '../../shared/job/index.ts';
import { maskUrl } from '../../shared/job/index.ts';
import { validatePayload } from '../../shared/payload.ts';
import { addDuration, ScheduleError } from '../../shared/schedule/index.ts';
import { slicedAll, timeSlicer } from '../../shared/timeSlice.ts';
import { createAccountService } from './accountService.ts';
import { batchHash, batchStream, checkIdempotencyKey, readBatch, recordAnswer, recordBatch, sameBatch, type BatchRecord } from './batchRecord.ts';
import { createCommands } from './commands.ts';
import { createJobSlots } from './jobSlots.ts';
import { createGroupService } from './groupService.ts';
import { createJobHistory } from './jobHistory.ts';
import { jobPoints, type JobEntry, type JobsView } from './jobsView.ts';

export const MAX_BATCH = 1000;
export const MAX_PAGE = 1000;
/** Writes of one batch under way at once: enough to keep a PostgreSQL pool busy, few enough that their continuations fit in a slice. */
const WRITES_IN_FLIGHT = 16;

/** A run asked for besides the schedule (the `run` of cron_add and cron_edit, and cron_run). The planner's RunOrder is another thing: a due run it publishes. */
export interface ExtraRun {
  /** Unix seconds: > now schedules the run then; any other value > 0 runs now. */
  run: number;
  payload: string | null;
}

export type JobAction = 'enable' | 'disable' | 'pause' | 'delete';

/**
 * The one batch limit of the API, for every function that takes several jobs (`data`) or ids
 * (`id`): the gateway passes batches through, so it holds for every caller of this service.
 */
function checkBatchSize(count: number, field: 'data' | 'id') {
  if (count > MAX_BATCH) throw new AppError('LIMIT_EXCEEDED', `at most ${MAX_BATCH} ${field === 'data' ? 'cron jobs' : 'ids'} per batch, got ${count}`, { field: [field] });
}

type JobCreated = Extract<JobEvent, { type: 'JobCreated' }>;
type DecidedCommand = { command: JobCommand; decided: Decided<JobState, JobEvent> };

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

/** The jobs service's use cases, in domain terms. The gRPC edge only translates to and from proto. */
export function createJobsService(store: EventStore, view: JobsView, clock: Clock) {
  const commands = createCommands(store, view, clock);
  const slots = createJobSlots(store, () => clock.now());
  const { now, ids, settle } = commands;
  const runJobCommand = commands.job;
  const accounts = createAccountService(store, view, commands);
  const { account } = accounts;

  const checkGroup = (accountId: number, input: SettingsInput) => {
    if (input.group !== undefined && input.group !== null && input.group !== 0 && !view.group(accountId, input.group)) {
      throw new AppError('NOT_FOUND', `group ${input.group} not found`, { field: ['group'] });
    }
  };

  const requestRunCommand = (accountId: number, id: number, order: ExtraRun, method: string): JobCommand => {
    if (order.payload !== null) validatePayload(order.payload, method);
    const nowMs = now();
    const runAt = order.run * 1000 > nowMs ? order.run * 1000 : nowMs;
    return { type: 'RequestRun', id, accountId, runId: `${id}:${runAt}:${randomBytes(4).toString('hex')}`, runAt, payload: order.payload };
  };

  const liveJob = (accountId: number, id: number): JobEntry => {
    const entry = view.job(accountId, id);
    if (!entry) throw new AppError('NOT_FOUND', `cron job ${id} not found`);
    return entry;
  };
  const liveJobs = (accountId: number, idList: number[]): JobEntry[] => idList.map((id) => liveJob(accountId, id));

  /** The view's entry, also for a job deleted a moment ago (cron_delete returns the record). */
  const fresh = (id: number, accountId: number): JobEntry => view.job(accountId, id) ?? view.anyJob(id)!;

  return {
    ...accounts,
    ...createGroupService(view, commands, account, fresh, slots),
    ...createJobHistory(store, view, commands, account, checkGroup, fresh),

    /**
     * Creates a batch of jobs. With an idempotency key the batch is recorded first (batchRecord.ts)
     * and a retry completes it under the same ids, or answers the answer recorded for it
     * (`answer`, with no entries); without one, a store failure part way leaves the jobs written
     * so far, and the error says so.
     */
    async addJobs(accountId: number, inputs: SettingsInput[], runs: (ExtraRun | null)[], idempotencyKey: string | null = null): Promise<{ entries: JobEntry[]; answer?: string }> {
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
          if (order) requestRunCommand(accountId, 0, order, event.data.settings.httpMethod);
        });
      }
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
        const write = async (id: number, i: number) => {
          // On a retry, what the first attempt already wrote is read back, not written again.
          const written = retry ? await store.readStream(streamName('cronjob', id)) : [];
          let position: bigint | null = null;
          if (written.length) answers[i] = evolveJob(null, written[0] as unknown as JobEvent)!;
          else {
            const input = inputs[i];
            const decided = created[i];
            if (!input || !decided) throw new Error(`the batch record has more ids (${jobIds.length}) than the batch has jobs (${inputs.length})`);
            const event: JobCreated = { type: 'JobCreated', data: { ...decided.data, id } };
            const handled = await runJobCommand({ type: 'CreateJob', id, accountId, input, defaultTimezone: owner.timezone }, { state: null, revision: 'no_stream', events: [event] });
            position = handled.position;
            answers[i] = handled.state!;
          }
          const order = runs[i];
          if (order && !written.some((e) => e.type === 'RunRequested')) position = (await runJobCommand(requestRunCommand(accountId, id, order, answers[i].settings.httpMethod))).position;
          return position;
        };
        await settle(await slicedAll(jobIds.length, (i) => write(jobIds[i]!, i), WRITES_IN_FLIGHT, slice));
        // The state folded from the stream's first event: revision 0.
        return { entries: answers.map((job) => ({ job, points: jobPoints(job), revision: 0 })) };
      }, idempotencyKey !== null);
    },

    /** Keeps the first answer made for a batch sent with an idempotency key; returns the one kept. */
    async recordBatchAnswer(accountId: number, idempotencyKey: string, answer: string): Promise<string> {
      account(accountId);
      checkIdempotencyKey(idempotencyKey);
      return storeFailure(() => recordAnswer(store, batchStream(accountId, idempotencyKey), answer, now()), true);
    },

    async editJobs(accountId: number, target: { ids: number[] } | { groupId: number }, input: SettingsInput, run: ExtraRun | null): Promise<JobEntry[]> {
      const owner = account(accountId);
      let entries: JobEntry[];
      if ('groupId' in target) {
        if (!view.group(accountId, target.groupId)) throw new AppError('NOT_FOUND', `group ${target.groupId} not found`);
        entries = view.jobsOf(accountId, (e) => e.job.settings.group === target.groupId);
      } else {
        checkBatchSize(target.ids.length, 'id');
        entries = liveJobs(accountId, target.ids);
      }
      checkGroup(accountId, input);
      // Validate everything against every job before writing anything: a failed edit changes nothing.
      if (entries.length === 0) resolveSettings({ ...defaultSettings(owner.timezone), url: 'http://example.com/' }, input, 0);
      const slice = timeSlicer();
      const decisions: DecidedCommand[][] = [];
      for (const entry of entries) {
        await slice();
        const edit: JobCommand = { type: 'EditJob', id: entry.job.id, accountId, input };
        const edited = decideOn(jobDecider, edit, entry.job, entry.revision, now());
        const steps: DecidedCommand[] = [{ command: edit, decided: edited }];
        if (run) {
          // The run is decided too, on the edited job: a disabled job refuses it (6) before the edit is stored.
          const after = edited.events.reduce(evolveJob, entry.job)!;
          const order = requestRunCommand(accountId, entry.job.id, run, after.settings.httpMethod);
          steps.push({ command: order, decided: decideOn(jobDecider, order, after, entry.revision + edited.events.length, now()) });
        }
        decisions.push(steps);
      }
      const positions = await slicedAll(
        entries.length,
        async (i) => {
          let position: bigint | null = null;
          for (const { command, decided } of decisions[i]!) position = (await runJobCommand(command, decided)).position ?? position;
          return position;
        },
        WRITES_IN_FLIGHT,
        slice,
      );
      await settle(positions);
      return entries.map(({ job }) => fresh(job.id, accountId));
    },

    async applyAction(accountId: number, idList: number[], action: JobAction, pauseFor: string | null): Promise<JobEntry[]> {
      account(accountId);
      checkBatchSize(idList.length, 'id');
      const entries = liveJobs(accountId, idList);
      const pauseUntil = (tz: string) => {
        if (pauseFor === null) return null;
        try {
          return addDuration(pauseFor, now(), tz);
        } catch (error) {
          if (error instanceof ScheduleError) throw new AppError('INVALID_PARAMETER', error.message, { field: ['for'] });
          throw error;
        }
      };
      // A repeated id is acted on once (deleting it twice would fail the second time); answers stay in request order.
      const unique = [...new Map(entries.map((e) => [e.job.id, e])).values()];
      const toRun: JobCommand[] = unique.map(({ job }) => {
        const id = job.id;
        if (action === 'enable') return { type: 'EnableJob', id, accountId };
        if (action === 'disable') return { type: 'DisableJob', id, accountId };
        if (action === 'delete') return { type: 'DeleteJob', id, accountId };
        return { type: 'PauseJob', id, accountId, until: pauseUntil(job.settings.timezone) };
      });
      // Decided on the view's state before anything is written: one refused id changes nothing.
      const decided = toRun.map((c) => {
        const { job, revision } = view.job(accountId, c.id)!;
        return decideOn(jobDecider, c, job, revision, now());
      });
      const results = await Promise.all(toRun.map((c, i) => runJobCommand(c, decided[i])));
      // Only the deletions this call made give their slots back (a concurrent one of the same job changed nothing).
      if (action === 'delete') await slots.release(accountId, results.filter((r) => r.events.length > 0).length);
      await settle(results.map((r) => r.position));
      return entries.map(({ job }) => fresh(job.id, job.accountId));
    },

    /** The operator's clean-up of an account: every job deleted, in batches; returns how many. */
    async deleteAllJobs(accountId: number): Promise<number> {
      account(accountId);
      const ids = view.jobsOf(accountId, () => true).map((e) => e.job.id);
      for (let i = 0; i < ids.length; i += MAX_BATCH) await this.applyAction(accountId, ids.slice(i, i + MAX_BATCH), 'delete', null);
      return ids.length;
    },

    getJob(accountId: number, id: number): JobEntry {
      account(accountId);
      return liveJob(accountId, id);
    },

    listJobs(accountId: number, query: { page: number; limit: number; keyword: string; groupId: number | null }): JobEntry[] {
      account(accountId);
      const keyword = query.keyword.trim().toLowerCase();
      const entries = view.jobsOf(accountId, (e) => {
        if (query.groupId !== null && e.job.settings.group !== query.groupId) return false;
        if (!keyword) return true;
        const s = e.job.settings;
        return String(e.job.id) === keyword || s.name.toLowerCase().includes(keyword) || maskUrl(s.url).toLowerCase().includes(keyword);
      });
      const limit = Math.min(Math.max(query.limit || MAX_PAGE, 1), MAX_PAGE);
      const page = Math.max(query.page || 1, 1);
      return entries.slice((page - 1) * limit, page * limit);
    },

    async runJob(accountId: number, id: number, time: number, payload: string | null): Promise<number> {
      account(accountId);
      const entry = liveJob(accountId, id);
      const command = requestRunCommand(accountId, id, { run: time > 0 ? time : 1, payload }, entry.job.settings.httpMethod);
      const result = await runJobCommand(command);
      await view.waitFor(result.position);
      return Math.floor((command as Extract<JobCommand, { type: 'RequestRun' }>).runAt / 1000);
    },

    /**
     * Whether a success of this job could change anything (a failure count to reset, a one-time
     * job to stop): most cannot, and then the execution need not even be decoded.
     */
    successMatters(jobId: number): boolean {
      const entry = view.anyJob(jobId);
      if (!entry || entry.job.deleted) return false;
      if (entry.job.fail > 0) return true;
      const kind = scheduleKind(entry.job.settings, jobId);
      return kind === 'one-time' || kind === 'timestamp';
    },

    /** An execution's outcome (from the bus): counts consecutive failures, auto-disables, stops a done one-time job. */
    async recordExecution(jobId: number, runId: string, succeeded: boolean, manual: boolean): Promise<void> {
      const entry = view.anyJob(jobId);
      if (!entry || entry.job.deleted) return;
      const kind = manual ? null : scheduleKind(entry.job.settings, jobId);
      const oneTimeDone = kind === 'one-time' || kind === 'timestamp';
      // The common case, a success with nothing to reset, changes nothing: skip loading the stream.
      if (succeeded && entry.job.fail === 0 && !oneTimeDone) return;
      const result = await runJobCommand({ type: 'RecordExecution', id: jobId, runId, succeeded, oneTimeDone });
      await view.waitFor(result.position);
    },
  };
}

export type JobsService = ReturnType<typeof createJobsService>;

function scheduleKind(settings: JobSettings, jobId: number) {
  try {
    return compileSchedule(settings, jobId).kind;
  } catch {
    return null;
  }
}
