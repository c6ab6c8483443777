import { evolveJob, type JobEvent, type JobState } from './cronJob.ts';
import type { JobSettings } from './settings.ts';
import { diffSettings, type SettingChange } from './settingsDiff.ts';

/** The version an event of a job made: its number, what changed, and the version it restored if it is a rollback. */
export interface VersionMark {
  version: number;
  changes: SettingChange[];
  rollbackTo: number | null;
}

interface Step {
  index: number;
  event: JobEvent;
  before: JobSettings | null;
  after: JobSettings;
}

/** The events that make versions: the creation, then every change of the settings, with the settings around each. */
function* versionSteps(events: readonly JobEvent[]): Generator<Step> {
  let state: JobState = null;
  for (const [index, event] of events.entries()) {
    const before = state;
    state = evolveJob(state, event);
    if (!state) continue;
    if (event.type === 'JobCreated' || (event.type === 'JobEdited' && before)) yield { index, event, before: before?.settings ?? null, after: state.settings };
  }
}

/**
 * For each event of a job's stream, in stream order, the version it made, or null for an event
 * that changes no setting (pause, enable, a failure counted...). The creation is version 1 and
 * each change of the settings the next one: numbered from the stream alone, so every replica and
 * every restart number alike. Pure.
 */
export function jobVersions(events: readonly JobEvent[]): (VersionMark | null)[] {
  const marks: (VersionMark | null)[] = events.map(() => null);
  let version = 0;
  for (const { index, event, before, after } of versionSteps(events)) {
    const rollbackTo = event.type === 'JobEdited' ? (event.data.rollbackTo ?? null) : null;
    marks[index] = { version: ++version, changes: diffSettings(before, after), rollbackTo };
  }
  return marks;
}

/** The settings of every version of a job, oldest first (index 0 is version 1), secrets as the events hold them. Pure. */
export function versionSettings(events: readonly JobEvent[]): JobSettings[] {
  return [...versionSteps(events)].map((step) => step.after);
}
