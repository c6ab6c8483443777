import { headerSecrets, maskHeaders, maskUrl, urlSecret } from './secretSettings.ts';
import { SETTING_NAMES, settingOf, type JobSettings, type SettingName } from './settings.ts';

/**
 * One setting that differs between two versions of a job, as an answer may show it. `before` and
 * `after` are the values as cron_get shows them (URL credentials and header values masked); they
 * are absent when only a secret part changed. `secret` says a secret part changed (the password,
 * the URL's credentials, a header value): its values, clear or sealed, are never in a change.
 */
export interface SettingChange {
  field: SettingName;
  before?: unknown;
  after?: unknown;
  secret?: true;
}

/** A value split into what may be shown and the secret it holds ('' for none). */
interface Parts {
  shown: unknown;
  hidden: string;
}

/** Settings that hold a secret inside a value anyone may see, and how each is split. */
const SPLIT: Partial<Record<SettingName, (value: string) => Parts>> = {
  url: (value) => ({ shown: maskUrl(value), hidden: urlSecret(value) }),
  httpHeaders: (value) => ({ shown: maskHeaders(value), hidden: headerSecrets(value) }),
};

function partsOf(name: SettingName, value: unknown): Parts {
  if (value === undefined) return { shown: null, hidden: '' };
  // A secret row (the password) shows nothing at all.
  if (settingOf(name).secret) return { shown: null, hidden: typeof value === 'string' ? value : JSON.stringify(value) };
  const split = SPLIT[name];
  return split && typeof value === 'string' ? split(value) : { shown: value, hidden: '' };
}

/**
 * What changed from `before` to `after`, in the order of the settings table. `before` null is the
 * job's creation: every setting that has a value (not '' or null) is listed, from null. Pure.
 */
export function diffSettings(before: JobSettings | null, after: JobSettings): SettingChange[] {
  const changes: SettingChange[] = [];
  for (const field of SETTING_NAMES) {
    const b = partsOf(field, before?.[field]);
    const a = partsOf(field, after[field]);
    const change: SettingChange = { field };
    if (b.shown !== a.shown && !(before === null && a.shown === '')) {
      change.before = b.shown;
      change.after = a.shown;
    }
    if (b.hidden !== a.hidden) change.secret = true;
    if ('after' in change || change.secret) changes.push(change);
  }
  return changes;
}
