import { AppError } from '../../shared/errors.ts';
import { STATUS, defaultSettings, evolveJob, initialJobState, resolveSettings, type CronJob, type JobEvent, type JobState, type SettingsInput } from '../../shared/job/index.ts';
import type { Decider } from '../../shared/eventStore/handleCommand.ts';

/** What can be asked of one cron job. `accountId` is who asks: another account's job is "not found". */
export type JobCommand =
  | { type: 'CreateJob'; id: number; accountId: number; input: SettingsInput; defaultTimezone: string }
  | { type: 'EditJob'; id: number; accountId: number; input: SettingsInput }
  | { type: 'EnableJob'; id: number; accountId: number }
  | { type: 'DisableJob'; id: number; accountId: number }
  | { type: 'PauseJob'; id: number; accountId: number; until: number | null }
  | { type: 'DeleteJob'; id: number; accountId: number }
  | { type: 'RequestRun'; id: number; accountId: number; runId: string; runAt: number; payload: string | null }
  | { type: 'RecordExecution'; id: number; runId: string; succeeded: boolean; oneTimeDone: boolean };

const notFound = (id: number) => new AppError('NOT_FOUND', `cron job ${id} not found`);

/** The job the command may act on: it exists, is not deleted, and belongs to the caller. */
function owned(state: JobState, command: { id: number; accountId: number }): CronJob {
  if (!state || state.deleted || state.accountId !== command.accountId) throw notFound(command.id);
  return state;
}

/** Pure: the events that carry out the command on this state, or an AppError. */
export function decideJob(command: JobCommand, state: JobState, now: number): JobEvent[] {
  switch (command.type) {
    case 'CreateJob': {
      if (state) throw new AppError('INTERNAL', `cron job id ${command.id} is already taken`);
      if (command.input.url === undefined) throw new AppError('MISSING_PARAMETER', 'url: is required');
      const settings = resolveSettings({ ...defaultSettings(command.defaultTimezone), url: '' }, command.input, command.id, now);
      return [{ type: 'JobCreated', data: { id: command.id, accountId: command.accountId, settings, at: now } }];
    }
    case 'EditJob': {
      const job = owned(state, command);
      const next = resolveSettings(job.settings, command.input, job.id, now);
      // Record only what really changed: the stream doubles as the job's audit history.
      const changes: SettingsInput = {};
      for (const key of Object.keys(command.input) as (keyof SettingsInput)[]) {
        if (command.input[key] !== undefined && next[key] !== job.settings[key]) (changes as any)[key] = next[key];
      }
      return Object.keys(changes).length ? [{ type: 'JobEdited', data: { changes, at: now } }] : [];
    }
    case 'EnableJob': {
      const job = owned(state, command);
      if (job.status === STATUS.ACTIVE && job.fail === 0) return [];
      return [{ type: 'JobEnabled', data: { at: now } }];
    }
    case 'DisableJob': {
      const job = owned(state, command);
      return job.status === STATUS.DISABLED ? [] : [{ type: 'JobDisabled', data: { at: now } }];
    }
    case 'PauseJob': {
      owned(state, command);
      if (command.until !== null && command.until <= now) throw new AppError('INVALID_PARAMETER', 'for: the pause must end in the future');
      return [{ type: 'JobPaused', data: { until: command.until, at: now } }];
    }
    case 'DeleteJob': {
      owned(state, command);
      return [{ type: 'JobDeleted', data: { at: now } }];
    }
    case 'RequestRun': {
      const job = owned(state, command);
      if (job.status === STATUS.DISABLED || job.status === STATUS.AUTO_DISABLED) {
        throw new AppError('INVALID_STATE', `cron job ${job.id} is disabled; enable it before running it`);
      }
      return [{ type: 'RunRequested', data: { runId: command.runId, runAt: command.runAt, payload: command.payload, at: now } }];
    }
    case 'RecordExecution':
      return decideExecution(command, state, now);
  }
}

/** Failure counting (docs/api.md (What every call to your URL carries)): consecutive failures, reset by a success, auto-disable at the threshold. */
function decideExecution(command: Extract<JobCommand, { type: 'RecordExecution' }>, state: JobState, now: number): JobEvent[] {
  if (!state || state.deleted || state.countedRuns.includes(command.runId)) return [];
  const { runId } = command;
  const events: JobEvent[] = [];
  if (command.succeeded) {
    if (state.fail > 0) events.push({ type: 'FailuresReset', data: { runId, at: now } });
  } else if (state.status !== STATUS.AUTO_DISABLED && state.status !== STATUS.DISABLED) {
    const fail = state.fail + 1;
    if (fail >= state.settings.failureThreshold) {
      events.push({ type: 'JobAutoDisabled', data: { fail, reason: `${fail} consecutive failures reached the failure threshold of ${state.settings.failureThreshold}`, runId, at: now } });
    } else {
      events.push({ type: 'FailureCounted', data: { fail, runId, at: now } });
    }
  }
  // A one-time job is done after its run, whatever the outcome (docs/api.md (Cron jobs): status 6).
  if (command.oneTimeDone && state.status === STATUS.ACTIVE && !events.some((e) => e.type === 'JobAutoDisabled')) {
    events.push({ type: 'JobStopped', data: { runId, at: now } });
  }
  return events;
}

/** The job's decider: the shared job model's fold plus this service's rules. */
export const jobDecider: Decider<JobCommand, JobState, JobEvent> = { initialState: initialJobState, evolve: evolveJob, decide: decideJob };
