import type { Decider } from '../decider.ts';
import { rateReached, rateSentence, recordRun, type RateWindow } from './failureRate.ts';

/**
 * When a job's executions call for a notification (FastCron's rules, in our words):
 * - every `notifyEvery`-th consecutive failure;
 * - "okay again" on the first success after a notified failure;
 * - always when the failures reach `failureThreshold` (the job is auto-disabled then);
 * - `notifyMatch`: the output contains the text (or, written `!text`, does not contain it);
 * - `notifyTime`: the run took longer than that many seconds;
 * - `notifyFailureRate` (Tock's): a failed run brings the failures to that percent of the runs in
 *   the last `notifyFailureWindow` minutes (once, until the rate falls below it: then "okay");
 * - nothing at all while `notify` is off, or the job or its account is disabled.
 *
 * The notifier keeps its own count of consecutive failures per job (stream `notifyjob-<jobId>`),
 * fed by the execution events it consumes, so its decisions never wait on another service.
 */

export type TriggerKind = 'failed' | 'disabled' | 'okay' | 'match' | 'slow' | 'rate';

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
}

/** The facts of a job a notification shows (and routes by). */
export type ShownJob = Pick<JobFacts, 'id' | 'accountId' | 'name' | 'url' | 'group' | 'groupName' | 'failureThreshold' | 'channels'>;

const shownJob = (j: JobFacts): ShownJob => ({
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
  job: ShownJob;
  execution: ExecutionFacts;
}

export interface JobNotifyState {
  fail: number;
  /** Scheduled time (Unix seconds) of the first of the current consecutive failures; 0 when not failing. */
  failingSince: number;
  /** A failure (or the auto-disable) was notified and no success has followed yet. */
  notified: boolean;
  /** The auto-disable at the threshold was notified (once per run of failures). */
  disabledNotified: boolean;
  /** The enabledAt the count belongs to. */
  since: number;
  /** Runs already seen: a redelivered execution decides nothing new. */
  runs: string[];
  /** The recent runs' failure rate, for a job with notifyFailureRate. */
  rate?: RateWindow;
}

export type JobNotifyEvent =
  | { type: 'ExecutionCounted'; data: { runId: string; fail: number; since: number; at: number; failingSince?: number; rate?: RateWindow | null } }
  | { type: 'NotificationTriggered'; data: { trigger: Trigger } };

export interface SeeExecution {
  job: JobFacts;
  execution: ExecutionFacts;
}

const RUNS_KEPT = 64;
/** Events kept in a `notifyjob-<jobId>` stream: the count is absolute in each, so the recent past is the whole state. */
export const JOB_NOTIFY_EVENTS_KEPT = 500;
/** Output kept in a notification: enough to recognise the error page, never the whole body. */
export const OUTPUT_SHOWN = 1000;

export const initialJobNotifyState = (): JobNotifyState => ({ fail: 0, failingSince: 0, notified: false, disabledNotified: false, since: 0, runs: [] });

export function evolveJobNotify(state: JobNotifyState, event: JobNotifyEvent): JobNotifyState {
  switch (event.type) {
    case 'ExecutionCounted': {
      const reset = event.data.fail === 0;
      const fresh = event.data.since !== state.since;
      return {
        fail: event.data.fail,
        // Events written before failingSince existed leave it as it was while the failure lasts.
        failingSince: event.data.failingSince ?? (reset ? 0 : state.failingSince),
        notified: reset || fresh ? false : state.notified,
        disabledNotified: reset || fresh ? false : state.disabledNotified,
        since: event.data.since,
        runs: [...state.runs.slice(-(RUNS_KEPT - 1)), event.data.runId],
        ...(event.data.rate ? { rate: event.data.rate } : event.data.rate === undefined && !fresh && state.rate ? { rate: state.rate } : {}),
      };
    }
    case 'NotificationTriggered': {
      const kind = event.data.trigger.kind;
      if (kind === 'failed') return { ...state, notified: true };
      if (kind === 'disabled') return { ...state, notified: true, disabledNotified: true };
      if (kind === 'okay') return { ...state, notified: false };
      return state;
    }
    default:
      return state;
  }
}

/** `notifyMatch`: contains, or with a leading `!`, does not contain. Empty: off. */
export function matches(notifyMatch: string, output: string): boolean {
  if (!notifyMatch) return false;
  if (notifyMatch.startsWith('!')) return notifyMatch.length > 1 && !output.includes(notifyMatch.slice(1));
  return output.includes(notifyMatch);
}

/** Pure: the events one execution adds to the job's notification stream. */
export function decideJobNotify(command: SeeExecution, state: JobNotifyState, now: number): JobNotifyEvent[] {
  const { job, execution } = command;
  if (state.runs.includes(execution.runId)) return [];
  // Enabling the job starts a new count (the jobs service resets `fail` then too).
  const base = job.enabledAt !== state.since ? { ...initialJobNotifyState(), since: job.enabledAt } : state;
  const fail = execution.failed ? base.fail + 1 : 0;
  const failingSince = !execution.failed ? 0 : base.fail > 0 && base.failingSince ? base.failingSince : execution.time;
  const silent = job.muted || !job.notify;
  // A job with a failure-rate rule counts every run (a success lowers the rate); without one, a rate left over is dropped.
  const rate = job.notifyFailureRate ? recordRun(base.rate, job.notifyFailureWindow, execution.time, execution.failed) : null;
  const rateOver = rate !== null && rateReached(rate, job.notifyFailureRate!);
  const rateAlert = rate !== null && !silent && execution.failed && rateOver && !rate.alerted;
  const rateRecovered = rate !== null && !silent && rate.alerted && !rateOver;
  if (rate) rate.alerted = rateAlert || (rate.alerted && !rateRecovered);
  const rateField = rate ? { rate } : base.rate ? { rate: null } : {};
  const counted: JobNotifyEvent = { type: 'ExecutionCounted', data: { runId: execution.runId, fail, since: job.enabledAt, at: now, failingSince, ...rateField } };
  const events: JobNotifyEvent[] = [];
  if (rate || fail !== base.fail || base.since !== state.since || (!execution.failed && base.notified)) events.push(counted);
  if (silent) return events;

  let kind: TriggerKind | null = null;
  const reasons: string[] = [];
  if (execution.failed && fail >= job.failureThreshold && !base.disabledNotified) {
    kind = 'disabled';
    reasons.push(`${fail} consecutive failure${fail === 1 ? '' : 's'} reached the failure threshold of ${job.failureThreshold}: the job is disabled`);
  } else if (execution.failed && fail % job.notifyEvery === 0) {
    kind = 'failed';
    reasons.push(fail === 1 ? 'the run failed' : `${fail} consecutive failures`);
  } else if (!execution.failed && base.notified) {
    kind = 'okay';
    reasons.push('the run succeeded again after a notified failure');
  }
  if (rateAlert) {
    kind ??= 'rate';
    reasons.push(`${rateSentence(rate, job.notifyFailureWindow)}, at least ${job.notifyFailureRate}% notifies`);
  } else if (rateRecovered) {
    kind ??= 'okay';
    reasons.push(`the failure rate fell below ${job.notifyFailureRate}%: ${rateSentence(rate, job.notifyFailureWindow)}`);
  }
  if (matches(job.notifyMatch, execution.output)) {
    kind ??= 'match';
    reasons.push(job.notifyMatch.startsWith('!') ? `the output does not contain "${job.notifyMatch.slice(1)}"` : `the output contains "${job.notifyMatch}"`);
  }
  if (job.notifyTime && execution.executionTime > job.notifyTime) {
    kind ??= 'slow';
    reasons.push(`the run took ${execution.executionTime.toFixed(1)} s, longer than ${job.notifyTime} s`);
  }
  if (!kind) return events;
  if (!events.length) events.push(counted);
  const trigger: Trigger = {
    key: `${execution.runId}:${kind}`,
    kind,
    reasons,
    at: now,
    fail,
    ...(execution.failed ? { failingSince } : base.failingSince ? { failingSince: base.failingSince } : {}),
    job: shownJob(job),
    execution: { ...execution, output: execution.output.slice(0, OUTPUT_SHOWN) },
  };
  events.push({ type: 'NotificationTriggered', data: { trigger } });
  return events;
}

export const jobNotifyDecider: Decider<SeeExecution, JobNotifyState, JobNotifyEvent> = {
  initialState: initialJobNotifyState,
  evolve: evolveJobNotify,
  decide: decideJobNotify,
};

export const jobNotifyStream = (jobId: number) => `notifyjob-${jobId}`;
