import { sinceText } from './hostGroups.ts';
import type { JobFacts, TriggerKind } from './trigger.ts';

/**
 * What a job that stays failing adds to the rules: reminders (`notifyReminder`: the failure is
 * told once, then again at the first failed run N hours or more after it was last told) and
 * escalation (a channel with `escalateAfter` M hears of a failure only once it has lasted M
 * minutes, at the first failed run that late, then of each notification of it, and of its end).
 * Pure.
 */

export interface FollowUpInput {
  job: Pick<JobFacts, 'notifyReminder' | 'escalations'>;
  /** This run: failed or not, its scheduled time (Unix seconds), the decision instant (ms). */
  failed: boolean;
  time: number;
  now: number;
  /** This run's consecutive failures and since when (0 on a success). */
  fail: number;
  failingSince: number;
  /** Before this run: a failure was notified to every channel (consecutive rules), or a rate alert was. */
  notified: boolean;
  rateAlerted: boolean;
  /** Before this run: the longest escalation passed in this failure (minutes, 0 none), and when it was last notified (ms). */
  escalated: number;
  notifiedAt: number;
  /** The rate of the job's recent runs, in words ('' without a rate rule). */
  rateText: string;
  /** What the other rules decided for this run. */
  kind: TriggerKind | null;
}

export interface FollowUp {
  kind: TriggerKind | null;
  reasons: string[];
  /** The longest escalation passed after this run. */
  escalated: number;
  onlyEscalation: boolean;
}

/** "35 minutes", "2 hours 5 minutes", "3 days 1 hour" */
export function durationText(seconds: number): string {
  const units: [number, string][] = [[86_400, 'day'], [3600, 'hour'], [60, 'minute']];
  const parts: string[] = [];
  let left = Math.max(60, Math.floor(seconds));
  for (const [size, name] of units) {
    const n = Math.floor(left / size);
    if (n && parts.length < 2) parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    left -= n * size;
  }
  return parts.join(' ');
}

export function followUp(i: FollowUpInput): FollowUp {
  const heard = i.notified || i.rateAlerted;
  if (!i.failed) {
    // The end of a failure told to escalation channels: they hear of it too (with "okay" when the others do).
    if (i.escalated > 0 && i.kind === null) return { kind: 'okay', reasons: ['the run succeeded again after an escalated failure'], escalated: i.escalated, onlyEscalation: !heard };
    return { kind: i.kind, reasons: [], escalated: i.escalated, onlyEscalation: false };
  }
  const reasons: string[] = [];
  let { kind, escalated } = i;
  let onlyEscalation = false;
  const lasted = i.time - i.failingSince;
  const crossed = i.job.escalations.filter((m) => m > i.escalated && m * 60 <= lasted);
  if (crossed.length) {
    escalated = Math.max(...crossed);
    reasons.push(`failing for ${durationText(lasted)}, since ${sinceText(i.failingSince, i.now)}`);
    // Nothing else to tell this run: the escalation is for the channels that wait for it.
    if (!kind) {
      kind = 'failed';
      onlyEscalation = true;
    }
  }
  const hours = i.job.notifyReminder;
  if (!kind && hours && (heard || escalated > 0) && i.now - i.notifiedAt >= hours * 3600_000) {
    // A failure told only as a rate stays a rate: a reminder must not turn the next success into "okay again".
    const asRate = i.rateAlerted && !i.notified;
    kind = asRate ? 'rate' : 'failed';
    onlyEscalation = !heard;
    const every = `a reminder every ${hours} hour${hours === 1 ? '' : 's'}`;
    const consecutive = `${i.fail} consecutive failure${i.fail === 1 ? '' : 's'} since ${sinceText(i.failingSince, i.now)}`;
    reasons.push(asRate ? `still failing often (${every}): ${i.rateText}` : `still failing (${every}): ${consecutive}`);
  }
  return { kind, reasons, escalated, onlyEscalation };
}
