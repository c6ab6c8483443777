import type { Decider } from '../decider.ts';
import { rateReached, rateSentence, recordRun, type RateWindow } from './failureRate.ts';
import { followUp } from './followUps.ts';
import { missedSentence, skipTrigger } from './skipped.ts';
import { shownJob, type ExecutionFacts, type JobFacts, type Trigger, type TriggerKind } from './trigger.ts';

/**
 * When a job's executions call for a notification (FastCron's rules, in our words):
 * - every `notifyEvery`-th consecutive failure;
 * - "okay again" on the first success after a notified failure;
 * - always when the failures reach `failureThreshold` (the job is auto-disabled then);
 * - `notifyMatch`: the output contains the text (or, written `!text`, does not contain it);
 * - `notifyTime`: the run took longer than that many seconds;
 * - `notifyFailureRate` (Tock's): a failed run brings the failures to that percent of the runs in
 *   the last `notifyFailureWindow` minutes (once, until the rate falls below it: then "okay");
 * - `notifySkipped` (Tock's): a run skipped, or a late run standing for runs missed after downtime (skipped.ts);
 * - `notifyReminder` and escalation channels (Tock's): see followUps.ts;
 * - nothing at all while `notify` is off, the job or its account is disabled, or the job is
 *   snoozed (Tock's: for a while, or until its next successful run).
 *
 * The notifier keeps its own count of consecutive failures per job (stream `notifyjob-<jobId>`),
 * fed by the execution events it consumes, so its decisions never wait on another service.
 */

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
  /** The longest escalation threshold (minutes) the current failure has passed; 0: none. */
  escalated: number;
  /** When the current failure was last notified (ms); 0: not yet. */
  failureNotifiedAt: number;
  /** Notifications silenced until `until` (ms), or until the next successful run when null. */
  snooze: Snooze | null;
}

export interface Snooze {
  /** ms; null: until the job recovers (its next successful run). */
  until: number | null;
}

export type JobNotifyEvent =
  | {
      type: 'ExecutionCounted';
      // Each field is the state after this run, whole: the stream keeps only its recent past.
      data: {
        runId: string;
        fail: number;
        since: number;
        at: number;
        failingSince?: number;
        rate?: RateWindow | null;
        escalated?: number;
        failureNotifiedAt?: number;
        snooze?: Snooze | null;
      };
    }
  | { type: 'NotificationTriggered'; data: { trigger: Trigger } }
  | { type: 'NotificationsSnoozed'; data: { until: number | null; at: number } }
  | { type: 'SnoozeEnded'; data: { at: number } };

export interface SeeExecution {
  job: JobFacts;
  execution: ExecutionFacts;
}

/** Silence the job's notifications until `until` (ms), or until it recovers (null); or end a snooze. */
export type SnoozeCommand = { type: 'Snooze'; until: number | null } | { type: 'Unsnooze' };

export type JobNotifyCommand = SeeExecution | SnoozeCommand;

/** The snooze in force at `now`, or null (one whose time has passed is over). */
export const activeSnooze = (snooze: Snooze | null | undefined, now: number): Snooze | null => (snooze && (snooze.until === null || now < snooze.until) ? snooze : null);

const RUNS_KEPT = 64;
/** Events kept in a `notifyjob-<jobId>` stream: the count is absolute in each, so the recent past is the whole state. */
export const JOB_NOTIFY_EVENTS_KEPT = 500;
/** Output kept in a notification: enough to recognise the error page, never the whole body. */
export const OUTPUT_SHOWN = 1000;

export const initialJobNotifyState = (): JobNotifyState => ({
  fail: 0,
  failingSince: 0,
  notified: false,
  disabledNotified: false,
  since: 0,
  runs: [],
  escalated: 0,
  failureNotifiedAt: 0,
  snooze: null,
});

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
        escalated: event.data.escalated ?? (reset || fresh ? 0 : state.escalated),
        failureNotifiedAt: event.data.failureNotifiedAt ?? (reset || fresh ? 0 : state.failureNotifiedAt),
        snooze: event.data.snooze === undefined ? state.snooze : event.data.snooze,
      };
    }
    case 'NotificationsSnoozed':
      return { ...state, snooze: { until: event.data.until } };
    case 'SnoozeEnded':
      return { ...state, snooze: null };
    case 'NotificationTriggered': {
      const { kind, onlyEscalation } = event.data.trigger;
      // Told to escalation channels only, a failure is not one the others must hear "okay" about.
      if (onlyEscalation) return state;
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

function decideSnooze(command: SnoozeCommand, state: JobNotifyState, now: number): JobNotifyEvent[] {
  if (command.type === 'Snooze') return [{ type: 'NotificationsSnoozed', data: { until: command.until, at: now } }];
  return activeSnooze(state.snooze, now) ? [{ type: 'SnoozeEnded', data: { at: now } }] : [];
}

/** Pure: the events one execution (or a snooze) adds to the job's notification stream. */
export function decideJobNotify(command: JobNotifyCommand, state: JobNotifyState, now: number): JobNotifyEvent[] {
  if ('type' in command) return decideSnooze(command, state, now);
  const { job, execution } = command;
  if (state.runs.includes(execution.runId)) return [];
  // Enabling the job starts a new count (the jobs service resets `fail` then too); a snooze stays.
  const base = job.enabledAt !== state.since ? { ...initialJobNotifyState(), since: job.enabledAt, snooze: state.snooze } : state;
  if (execution.skipReason) {
    const trigger = skipTrigger(job, execution, base.fail, job.muted || !job.notify || activeSnooze(base.snooze, now) !== null, now);
    return trigger ? [{ type: 'NotificationTriggered', data: { trigger } }] : [];
  }
  const fail = execution.failed ? base.fail + 1 : 0;
  const failingSince = !execution.failed ? 0 : base.fail > 0 && base.failingSince ? base.failingSince : execution.time;
  // A snooze until recovery ends at the first successful run, which is then told as usual ("okay").
  const snoozed = activeSnooze(base.snooze, now);
  const snooze = snoozed && snoozed.until === null && !execution.failed ? null : snoozed;
  const silent = job.muted || !job.notify || snooze !== null;
  // A job with a failure-rate rule counts every run (a success lowers the rate); without one, a rate left over is dropped.
  const rate = job.notifyFailureRate ? recordRun(base.rate, job.notifyFailureWindow, execution.time, execution.failed) : null;
  const rateOver = rate !== null && rateReached(rate, job.notifyFailureRate!);
  const rateAlert = rate !== null && !silent && execution.failed && rateOver && !rate.alerted;
  const rateRecovered = rate !== null && !silent && rate.alerted && !rateOver;
  if (rate) rate.alerted = rateAlert || (rate.alerted && !rateRecovered);
  const rateField = rate ? { rate } : base.rate ? { rate: null } : {};
  const snoozeField = base.snooze || snooze ? { snooze } : {};
  const counted = { type: 'ExecutionCounted' as const, data: { runId: execution.runId, fail, since: job.enabledAt, at: now, failingSince, ...rateField, ...snoozeField } };
  const events: JobNotifyEvent[] = [];
  if (rate || fail !== base.fail || base.since !== state.since || (!execution.failed && base.notified) || snooze !== base.snooze) events.push(counted);
  if (silent) return events;

  let kind: TriggerKind | null = null;
  const reasons: string[] = [];
  if (execution.failed && fail >= job.failureThreshold && !base.disabledNotified) {
    kind = 'disabled';
    reasons.push(`${fail} consecutive failure${fail === 1 ? '' : 's'} reached the failure threshold of ${job.failureThreshold}: the job is disabled`);
  } else if (execution.failed && fail % job.notifyEvery === 0 && !(job.notifyReminder && base.notified)) {
    // With reminders the failure is told once; reminders (followUps.ts) take over from there.
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
  if (job.notifySkipped && execution.missed) {
    kind ??= 'missed';
    reasons.push(missedSentence(execution.missed));
  }
  const follow = followUp({
    job,
    failed: execution.failed,
    time: execution.time,
    now,
    fail,
    failingSince: execution.failed ? failingSince : base.failingSince,
    notified: base.notified,
    rateAlerted: Boolean(base.rate?.alerted),
    escalated: base.escalated,
    notifiedAt: base.failureNotifiedAt,
    rateText: rate ? rateSentence(rate, job.notifyFailureWindow) : '',
    kind,
  });
  kind = follow.kind;
  reasons.push(...follow.reasons);
  // The follow-up state lives in the count event, whole. A success ends the failure, unless the job
  // is still told to be failing often (its reminders then count on from the last one).
  const escalated = execution.failed ? follow.escalated : 0;
  const failureNotifiedAt = execution.failed ? (kind ? now : base.failureNotifiedAt) : rate?.alerted ? base.failureNotifiedAt : 0;
  Object.assign(counted.data, { escalated, failureNotifiedAt });
  if (!events.length && (escalated !== base.escalated || failureNotifiedAt !== base.failureNotifiedAt)) events.push(counted);
  if (!kind) return events;
  if (!events.length) events.push(counted);
  const spell = execution.failed ? failingSince : base.failingSince;
  const trigger: Trigger = {
    key: `${execution.runId}:${kind}`,
    kind,
    reasons,
    at: now,
    fail,
    ...(spell ? { failingSince: spell } : {}),
    ...(follow.escalated ? { escalated: follow.escalated } : {}),
    ...(follow.onlyEscalation ? { onlyEscalation: true as const } : {}),
    job: shownJob(job),
    execution: { ...execution, output: execution.output.slice(0, OUTPUT_SHOWN) },
  };
  events.push({ type: 'NotificationTriggered', data: { trigger } });
  return events;
}

export const jobNotifyDecider: Decider<JobNotifyCommand, JobNotifyState, JobNotifyEvent> = {
  initialState: initialJobNotifyState,
  evolve: evolveJobNotify,
  decide: decideJobNotify,
};

export const jobNotifyStream = (jobId: number) => `notifyjob-${jobId}`;
