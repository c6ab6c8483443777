/**
 * The cron job aggregate, whole: its events, its state and how events fold into it (evolve), the
 * commands it takes and the rules that turn one into events (decide). Pure: the jobs service runs
 * the decider through handleCommand, and the planner folds the same events.
 */
import type { Decider } from '../decider.ts';
import { AppError } from '../errors.ts';
import { resolveSettings } from './resolveSettings.ts';
import { SETTING_NAMES, completeSettings, defaultSettings, type JobSettings, type SettingsInput } from './settings.ts';

/** 0 active, 1 disabled by the user, 4 disabled after failures, 5 paused, 6 one-time job done. */
export const STATUS = { ACTIVE: 0, DISABLED: 1, AUTO_DISABLED: 4, PAUSED: 5, STOPPED: 6 } as const;
export type JobStatus = (typeof STATUS)[keyof typeof STATUS];

/** The events of a `cronjob-<id>` stream: the job's whole history and its audit trail. */
export type JobEvent =
  | { type: 'JobCreated'; data: { id: number; accountId: number; settings: JobSettings; at: number } }
  /** `rollbackTo`: the change restores the settings of that version (cron_rollback). */
  | { type: 'JobEdited'; data: { changes: SettingsInput; at: number; rollbackTo?: number } }
  | { type: 'JobEnabled'; data: { at: number } }
  | { type: 'JobDisabled'; data: { at: number } }
  | { type: 'JobPaused'; data: { until: number | null; at: number } }
  | { type: 'JobDeleted'; data: { at: number } }
  | { type: 'RunRequested'; data: { runId: string; runAt: number; payload: string | null; at: number } }
  | { type: 'FailureCounted'; data: { fail: number; runId: string; at: number } }
  | { type: 'FailuresReset'; data: { runId: string; at: number } }
  | { type: 'JobAutoDisabled'; data: { fail: number; reason: string; runId: string; at: number } }
  | { type: 'JobStopped'; data: { runId: string; at: number } }
  /** A status badge (docs/api.md, cron_badge): `token` names its public URL; sealed at rest like the job's secrets. */
  | { type: 'BadgeIssued'; data: { token: string; at: number } }
  | { type: 'BadgeRevoked'; data: { at: number } };

export type JobEventType = JobEvent['type'];

export interface CronJob {
  id: number;
  accountId: number;
  settings: JobSettings;
  status: JobStatus;
  fail: number;
  pausedUntil: number | null;
  createdAt: number;
  updatedAt: number;
  deleted: boolean;
  /** Runs whose outcome was already counted: a redelivered execution must not count twice. */
  countedRuns: string[];
}

const COUNTED_RUNS_KEPT = 32;
const counted = (job: CronJob, runId: string) => [...job.countedRuns.slice(-(COUNTED_RUNS_KEPT - 1)), runId];

/** The state before the first event: `exists` is what decide checks. */
export type JobState = CronJob | null;

export const initialJobState = (): JobState => null;

/** Folds one event into the state. Pure; unknown event types leave the state as it is. */
export function evolveJob(state: JobState, event: JobEvent): JobState {
  if (event.type === 'JobCreated') {
    const { id, accountId, settings, at } = event.data;
    return { id, accountId, settings: completeSettings(settings), status: STATUS.ACTIVE, fail: 0, pausedUntil: null, createdAt: at, updatedAt: at, deleted: false, countedRuns: [] };
  }
  if (!state) return state;
  const at = event.data.at;
  switch (event.type) {
    case 'JobEdited':
      return { ...state, settings: { ...state.settings, ...stripUndefined(event.data.changes) }, updatedAt: at };
    case 'JobEnabled':
      return { ...state, status: STATUS.ACTIVE, fail: 0, pausedUntil: null, updatedAt: at };
    case 'JobDisabled':
      return { ...state, status: STATUS.DISABLED, pausedUntil: null, updatedAt: at };
    case 'JobPaused':
      return { ...state, status: STATUS.PAUSED, pausedUntil: event.data.until, updatedAt: at };
    case 'JobDeleted':
      return { ...state, deleted: true, updatedAt: at };
    case 'FailureCounted':
      return { ...state, fail: event.data.fail, countedRuns: counted(state, event.data.runId) };
    case 'FailuresReset':
      return { ...state, fail: 0, countedRuns: counted(state, event.data.runId) };
    case 'JobAutoDisabled':
      return { ...state, status: STATUS.AUTO_DISABLED, fail: event.data.fail, updatedAt: at, countedRuns: counted(state, event.data.runId) };
    case 'JobStopped':
      return { ...state, status: STATUS.STOPPED, updatedAt: at, countedRuns: counted(state, event.data.runId) };
    default:
      return state;
  }
}

/**
 * The status a reader sees at `now`: a pause with an end resumes by itself, so no event is
 * needed when it ends.
 */
export function effectiveStatus(job: CronJob, now: number): JobStatus {
  if (job.status === STATUS.PAUSED && job.pausedUntil !== null && job.pausedUntil <= now) return STATUS.ACTIVE;
  return job.status;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** What can be asked of one cron job. `accountId` is who asks: another account's job is "not found". */
export type JobCommand =
  | { type: 'CreateJob'; id: number; accountId: number; input: SettingsInput; defaultTimezone: string }
  | { type: 'EditJob'; id: number; accountId: number; input: SettingsInput }
  /** `settings`: those of `version`, read from the job's own stream (the history never changes, so they hold on a retry). */
  | { type: 'RollbackJob'; id: number; accountId: number; version: number; settings: JobSettings }
  | { type: 'EnableJob'; id: number; accountId: number }
  | { type: 'DisableJob'; id: number; accountId: number }
  | { type: 'PauseJob'; id: number; accountId: number; until: number | null }
  | { type: 'DeleteJob'; id: number; accountId: number }
  | { type: 'RequestRun'; id: number; accountId: number; runId: string; runAt: number; payload: string | null }
  /** `token`: drawn by the caller (the decider stays pure). */
  | { type: 'IssueBadge'; id: number; accountId: number; token: string }
  | { type: 'RevokeBadge'; id: number; accountId: number }
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
      if (command.input.url === undefined) throw new AppError('MISSING_PARAMETER', 'is required', { field: ['url'] });
      const settings = resolveSettings({ ...defaultSettings(command.defaultTimezone), url: '' }, command.input, command.id, now);
      return [{ type: 'JobCreated', data: { id: command.id, accountId: command.accountId, settings, at: now } }];
    }
    case 'EditJob': {
      const changes = changesOf(owned(state, command), command.input, now);
      return Object.keys(changes).length ? [{ type: 'JobEdited', data: { changes, at: now } }] : [];
    }
    case 'RollbackJob': {
      const job = owned(state, command);
      // Only what differs is given: it is checked against today's rules, as an edit of it would be.
      const input: Record<string, unknown> = {};
      for (const name of SETTING_NAMES) if (command.settings[name] !== job.settings[name]) input[name] = command.settings[name];
      const changes = changesOf(job, input, now);
      return Object.keys(changes).length ? [{ type: 'JobEdited', data: { changes, at: now, rollbackTo: command.version } }] : [];
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
      if (command.until !== null && command.until <= now) throw new AppError('INVALID_PARAMETER', 'the pause must end in the future', { field: ['for'] });
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
    case 'IssueBadge':
      owned(state, command);
      return [{ type: 'BadgeIssued', data: { token: command.token, at: now } }];
    case 'RevokeBadge':
      owned(state, command);
      return [{ type: 'BadgeRevoked', data: { at: now } }];
    case 'RecordExecution':
      return decideExecution(command, state, now);
  }
}

/** The settings `input` really changes, resolved and checked; the stream doubles as the job's history, so nothing else is recorded. */
function changesOf(job: CronJob, input: SettingsInput, now: number): SettingsInput {
  const next = resolveSettings(job.settings, input, job.id, now);
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(input) as (keyof SettingsInput)[]) {
    if (input[key] !== undefined && next[key] !== job.settings[key]) changes[key] = next[key];
  }
  return changes;
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

/** The cron job's decider: its rules (decideJob) and its fold (evolveJob), for handleCommand. */
export const jobDecider: Decider<JobCommand, JobState, JobEvent> = { initialState: initialJobState, evolve: evolveJob, decide: decideJob };
