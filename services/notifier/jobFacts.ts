import { maskCredentials, type JobFacts } from '../../shared/notify/index.ts';

/**
 * The part of a cron job the notifier needs, folded from the job's own events (`cronjob-<id>`):
 * its notify settings, name, URL (masked here, once), group and whether it is muted. A fold of
 * its own rather than shared/job's whole CronJob: the notifier keeps no password, header or body
 * of any job in memory, and needs when the job was last enabled, which the shared state does not
 * record.
 */
export interface JobRecord {
  id: number;
  accountId: number;
  name: string;
  url: string;
  group: number | null;
  /** Its time zone, for a snooze given in days. */
  timezone: string;
  notify: boolean;
  notifyEvery: number;
  notifyMatch: string;
  notifyTime: number | null;
  notifyFailureRate: number | null;
  notifyFailureWindow: number;
  notifyReminder: number | null;
  notifySkipped: boolean;
  failureThreshold: number;
  notifyChannels: number[] | null;
  /** 'user' when its owner disabled it; auto-disabled jobs still send their disable notice. */
  disabledByUser: boolean;
  deleted: boolean;
  enabledAt: number;
}

type Settings = Partial<
  Record<'name' | 'url' | 'group' | 'timezone' | 'notify' | 'notifyEvery' | 'notifyMatch' | 'notifyTime' | 'notifyFailureRate' | 'notifyFailureWindow' | 'notifyReminder' | 'notifySkipped' | 'failureThreshold' | 'notifyChannels', unknown>
>;

const channelList = (value: unknown): number[] | null | undefined => {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.length ? value.map(Number) : null;
  if (typeof value === 'string') return value.trim() ? value.split(',').map((s) => Number(s.trim())).filter((n) => Number.isSafeInteger(n) && n > 0) : null;
  return null;
};

function applySettings(job: JobRecord, s: Settings): JobRecord {
  const next = { ...job };
  if (typeof s.name === 'string') next.name = s.name;
  if (typeof s.url === 'string') next.url = maskCredentials(s.url);
  if (typeof s.timezone === 'string' && s.timezone) next.timezone = s.timezone;
  if (s.group !== undefined) next.group = typeof s.group === 'number' && s.group > 0 ? s.group : null;
  if (typeof s.notify === 'boolean') next.notify = s.notify;
  if (typeof s.notifyEvery === 'number') next.notifyEvery = s.notifyEvery;
  if (typeof s.notifyMatch === 'string') next.notifyMatch = s.notifyMatch;
  if (s.notifyTime !== undefined) next.notifyTime = typeof s.notifyTime === 'number' && s.notifyTime > 0 ? s.notifyTime : null;
  if (s.notifyFailureRate !== undefined) next.notifyFailureRate = typeof s.notifyFailureRate === 'number' && s.notifyFailureRate > 0 ? s.notifyFailureRate : null;
  if (typeof s.notifyFailureWindow === 'number' && s.notifyFailureWindow > 0) next.notifyFailureWindow = s.notifyFailureWindow;
  if (s.notifyReminder !== undefined) next.notifyReminder = typeof s.notifyReminder === 'number' && s.notifyReminder > 0 ? s.notifyReminder : null;
  if (typeof s.notifySkipped === 'boolean') next.notifySkipped = s.notifySkipped;
  if (typeof s.failureThreshold === 'number') next.failureThreshold = s.failureThreshold;
  const channels = channelList(s.notifyChannels);
  if (channels !== undefined) next.notifyChannels = channels;
  return next;
}

/** The fields of a job event this record reads; each event type carries some of them. */
interface JobEventData {
  id?: number;
  accountId?: number;
  settings?: Settings;
  changes?: Settings;
  at?: number;
}

/** Folds one job event; unknown types leave the record as it is. */
export function evolveJobRecord(job: JobRecord | undefined, type: string, eventData: unknown): JobRecord | undefined {
  const data = (eventData ?? {}) as JobEventData;
  if (type === 'JobCreated') {
    const base: JobRecord = {
      id: data.id ?? 0,
      accountId: data.accountId ?? 0,
      name: '',
      url: '',
      group: null,
      timezone: 'UTC',
      notify: true,
      notifyEvery: 1,
      notifyMatch: '',
      notifyTime: null,
      notifyFailureRate: null,
      notifyFailureWindow: 60,
      notifyReminder: null,
      notifySkipped: false,
      failureThreshold: 20,
      notifyChannels: null,
      disabledByUser: false,
      deleted: false,
      enabledAt: 0,
    };
    return applySettings(base, data.settings ?? {});
  }
  if (!job) return job;
  switch (type) {
    case 'JobEdited':
      return applySettings(job, data.changes ?? {});
    case 'JobEnabled':
      return { ...job, disabledByUser: false, enabledAt: data.at ?? 0 };
    case 'JobDisabled':
      return { ...job, disabledByUser: true };
    case 'JobDeleted':
      return { ...job, deleted: true };
    default:
      return job;
  }
}

/** The facts the rules take, with the group's name, the account's state and the escalation thresholds of the channels the job notifies. */
export function jobFacts(job: JobRecord, groupName: string, accountDisabled: boolean, escalations: number[]): JobFacts {
  return {
    id: job.id,
    accountId: job.accountId,
    name: job.name,
    url: job.url,
    group: job.group,
    groupName,
    notify: job.notify,
    notifyEvery: job.notifyEvery,
    notifyMatch: job.notifyMatch,
    notifyTime: job.notifyTime,
    notifyFailureRate: job.notifyFailureRate,
    notifyFailureWindow: job.notifyFailureWindow,
    failureThreshold: job.failureThreshold,
    muted: job.disabledByUser || job.deleted || accountDisabled,
    enabledAt: job.enabledAt,
    channels: job.notifyChannels,
    notifyReminder: job.notifyReminder,
    notifySkipped: job.notifySkipped,
    escalations,
  };
}
