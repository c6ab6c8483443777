import { completeSettings, type JobSettings, type SettingsInput } from './settings.ts';

/** 0 active, 1 disabled by the user, 4 disabled after failures, 5 paused, 6 one-time job done. */
export const STATUS = { ACTIVE: 0, DISABLED: 1, AUTO_DISABLED: 4, PAUSED: 5, STOPPED: 6 } as const;
export type JobStatus = (typeof STATUS)[keyof typeof STATUS];

/** The events of a `cronjob-<id>` stream: the job's whole history and its audit trail. */
export type JobEvent =
  | { type: 'JobCreated'; data: { id: number; accountId: number; settings: JobSettings; at: number } }
  | { type: 'JobEdited'; data: { changes: SettingsInput; at: number } }
  | { type: 'JobEnabled'; data: { at: number } }
  | { type: 'JobDisabled'; data: { at: number } }
  | { type: 'JobPaused'; data: { until: number | null; at: number } }
  | { type: 'JobDeleted'; data: { at: number } }
  | { type: 'RunRequested'; data: { runId: string; runAt: number; payload: string | null; at: number } }
  | { type: 'FailureCounted'; data: { fail: number; runId: string; at: number } }
  | { type: 'FailuresReset'; data: { runId: string; at: number } }
  | { type: 'JobAutoDisabled'; data: { fail: number; reason: string; runId: string; at: number } }
  | { type: 'JobStopped'; data: { runId: string; at: number } };

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
