/**
 * What the notification rules take and give: the facts of a job and of one of its executions,
 * and a trigger, one reason to notify about one run, which an account's notification merges with
 * others. Types only, and the one mapping from a job's facts to what a notification shows.
 */

export type TriggerKind = 'failed' | 'disabled' | 'okay' | 'match' | 'slow' | 'rate' | 'skipped' | 'missed';

/** What the notifier knows of a job when one of its executions arrives. */
export interface JobFacts {
  id: number;
  accountId: number;
  name: string;
  /** The job's URL as shown in notifications: credentials already masked. */
  url: string;
  group: number | null;
  groupName: string;
  notify: boolean;
  notifyEvery: number;
  notifyMatch: string;
  notifyTime: number | null;
  /** Percent of failed runs in the window that notifies; null: off. */
  notifyFailureRate: number | null;
  /** The window of notifyFailureRate, minutes. */
  notifyFailureWindow: number;
  failureThreshold: number;
  /** Disabled by its owner (not by failures), deleted, or its account disabled. */
  muted: boolean;
  /** When the job was last enabled (ms; 0 when never): enabling resets the failure count. */
  enabledAt: number;
  /** Channel ids this job notifies; null: every channel of the account. */
  channels: number[] | null;
  /** Hours between reminders while the job stays failing; null: none. */
  notifyReminder: number | null;
  /** The escalation thresholds (minutes) of the channels this job notifies, ascending. */
  escalations: number[];
  /** Tell runs skipped (instances, fair share, account disabled) or missed after downtime. */
  notifySkipped?: boolean;
}

/** The execution fields a notification shows (FastCron's webhook fields). */
export interface ExecutionFacts {
  runId: string;
  /** Scheduled time, Unix seconds. */
  time: number;
  failed: boolean;
  httpStatus: number;
  error: string;
  output: string;
  downloaded: number;
  /** Seconds. */
  executionTime: number;
  /** Not made: why (instances, fair_share, account_disabled). Absent for a run that was made. */
  skipReason?: string;
  /** Occurrences the run stands for: a late run after downtime, or a skip record of an account disabled. */
  missed?: number;
}

/** The facts of a job a notification shows (and routes by). */
export type ShownJob = Pick<JobFacts, 'id' | 'accountId' | 'name' | 'url' | 'group' | 'groupName' | 'failureThreshold' | 'channels'>;

export const shownJob = (j: JobFacts): ShownJob => ({
  id: j.id,
  accountId: j.accountId,
  name: j.name,
  url: j.url,
  group: j.group,
  groupName: j.groupName,
  failureThreshold: j.failureThreshold,
  channels: j.channels,
});

/** One reason to notify, about one run of one job. Merged with others of the account into a message. */
export interface Trigger {
  key: string;
  kind: TriggerKind;
  /** Sentences saying why, e.g. "3 consecutive failures". */
  reasons: string[];
  /** When it was decided (ms). */
  at: number;
  fail: number;
  /**
   * Scheduled time (Unix seconds) of the first failed run of the failure this trigger is about (or,
   * for "okay", that ended); absent when the run succeeded with nothing failing before, or unknown.
   */
  failingSince?: number;
  /** The longest escalation threshold (minutes) this failure has passed: escalation channels up to it take the trigger. */
  escalated?: number;
  /** For escalation channels only: the others did not hear of this failure, or asked not to hear of it now. */
  onlyEscalation?: true;
  job: ShownJob;
  execution: ExecutionFacts;
}
