/**
 * A job's versions (cron_history with `versions`) in an owner's words. Pure: the unit tests run
 * it under Node.
 */
import { FORM_LAYOUT } from './formLayout.ts';

/** One setting a version changed; `before` and `after` are absent when only a secret part changed. */
export interface SettingChange {
  field: string;
  before?: unknown;
  after?: unknown;
  secret?: boolean;
}

export interface VersionEntry {
  version: number;
  time: number;
  type: string;
  changes: SettingChange[];
  rollbackTo: number | null;
}

const shown = (v: unknown) => (v === null || v === undefined ? 'none' : v === '' ? 'empty' : typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

/** One change: `Name: "first" → "second"`; a secret only as changed (the API never answers its values). */
export function changeText(change: SettingChange): string {
  const label = FORM_LAYOUT[change.field]?.label ?? change.field;
  if (!('after' in change)) return `${label}: changed (a secret, not shown)`;
  return `${label}: ${shown(change.before)} → ${shown(change.after)}${change.secret ? ' (and its secret)' : ''}`;
}

/** What a version is: the creation, a change, or the restore of an earlier one. */
export function versionSummary(entry: VersionEntry): string {
  if (entry.type === 'JobCreated') return 'Created';
  if (entry.rollbackTo !== null) return `Restored version ${entry.rollbackTo}`;
  return 'Changed';
}
