/** A cron_history entry as the CLI reads it (docs/api.md, cron_history). */
export interface HistoryEntry {
  version: number | null;
  time: number;
  type: string;
  changes: { field: string; before?: unknown; after?: unknown; secret?: boolean }[] | null;
  rollbackTo: number | null;
}

const value = (v: unknown) => (v === null || v === undefined ? 'none' : JSON.stringify(v));

/**
 * What a version changed, on one line: `created`, or each setting as `name: before -> after`, a
 * secret part only as changed (the API never answers its values), and a rollback says so first.
 */
export function versionText(entry: HistoryEntry): string {
  if (entry.type === 'JobCreated') return 'created';
  const changes = (entry.changes ?? []).map((c) => {
    if (!('after' in c)) return `${c.field}: secret changed`;
    return `${c.field}: ${value(c.before)} -> ${value(c.after)}${c.secret ? ' (and its secret)' : ''}`;
  });
  const text = changes.join('; ') || 'no setting';
  return entry.rollbackTo !== null ? `rollback to version ${entry.rollbackTo}: ${text}` : text;
}
