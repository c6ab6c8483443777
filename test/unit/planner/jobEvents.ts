import type { JobEvent } from '../../../shared/job/index.ts';
import { defaultSettings, type JobSettings } from '../../../shared/job/index.ts';

/** Job events built by hand, as the jobs service would write them (settings fully resolved). */
export const jobCreated = (id: number, at: number, settings: Partial<JobSettings> = {}, accountId = 1): JobEvent => ({
  type: 'JobCreated',
  data: { id, accountId, at, settings: { ...defaultSettings('UTC'), url: `http://127.0.0.1/job/${id}`, ...settings } },
});
export const jobEdited = (at: number, changes: Partial<JobSettings>): JobEvent => ({ type: 'JobEdited', data: { changes, at } });
export const jobEnabled = (at: number): JobEvent => ({ type: 'JobEnabled', data: { at } });
export const jobDisabled = (at: number): JobEvent => ({ type: 'JobDisabled', data: { at } });
export const jobAutoDisabled = (at: number): JobEvent => ({ type: 'JobAutoDisabled', data: { fail: 20, reason: 'threshold', runId: 'r', at } });
export const jobPaused = (at: number, until: number | null): JobEvent => ({ type: 'JobPaused', data: { until, at } });
export const jobDeleted = (at: number): JobEvent => ({ type: 'JobDeleted', data: { at } });
export const jobStopped = (at: number): JobEvent => ({ type: 'JobStopped', data: { runId: 'r', at } });
export const failureCounted = (at: number, fail: number): JobEvent => ({ type: 'FailureCounted', data: { fail, runId: 'r', at } });
export const runRequested = (at: number, runId: string, runAt: number, payload: string | null = null): JobEvent => ({
  type: 'RunRequested',
  data: { runId, runAt, payload, at },
});

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
/** 2030-01-01T00:00:00Z: a round instant far from any DST edge in UTC. */
export const T0 = Date.UTC(2030, 0, 1);
