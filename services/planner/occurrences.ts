import { STATUS, effectiveStatus, type CronJob } from '../../shared/job/index.ts';
import { elapsedStep, mix, nextRun, parseSchedule, type DstPolicy, type Schedule, type ScheduleKind } from '../../shared/schedule/index.ts';

/** A cron_run (RunRequested) not yet emitted. */
export interface QueuedRun {
  runId: string;
  runAt: number;
  payload: string | null;
}

/**
 * One job in the schedule projection: its folded state, its compiled schedule and where it is in
 * its chain of occurrences. Kept small on purpose (a million of these must fit in memory): no
 * event history, the schedule compiled once per change and shared between jobs when it can be.
 */
export class JobPlan {
  constructor(
    public job: CronJob,
    /** null: the schedule failed to compile (cannot happen for events the jobs service wrote). */
    public schedule: Schedule | null,
    /** The last re-plan (creation, schedule edit, enable, disable, pause): only occurrences after it count. */
    public since: number,
    /**
     * Intervals: a point of the chain (its origin, the creation or schedule-edit time, or one of
     * its occurrences). The chain is a pure function of its origin, so two planners, or a planner
     * and cron_next, agree on it without sharing state.
     */
    public anchor: number,
    /** The last occurrence the running planner committed (live ticks); never before `since`. */
    public cursor: number,
    /** Bumped on every re-plan: heap entries of an older version are stale. */
    public version: number,
    public queued: QueuedRun[] | null,
    /** Re-planned by an event the last watermark did not cover: catch up from `since`, not from the watermark. */
    public fresh: boolean,
  ) {}
}

/**
 * A schedule that belongs to one job (a crontab with FastCron's R or an H, placed by job id), held as its
 * definition only: compiled, it costs kilobytes (its own tables and draws), which a hundred
 * thousand such jobs would multiply. It is compiled again on use, through a small cache.
 */
export class PrivateSchedule implements Schedule {
  constructor(
    readonly kind: ScheduleKind,
    readonly expression: string,
    readonly timezone: string,
    readonly filter: string | null,
    readonly jobId: number,
    readonly dst?: DstPolicy,
  ) {}
}

/** Compiled private schedules, by job id; emptied when full (a recompile costs about 10 us, a tick at most one). */
const privateCompiled = new Map<number, { ref: PrivateSchedule; compiled: Schedule }>();
const PRIVATE_CACHE = 10_000;

/** The compiled schedule of a plan (shared ones are kept compiled; private ones go through the cache). */
export function scheduleOf(plan: JobPlan): Schedule | null {
  const s = plan.schedule;
  if (!(s instanceof PrivateSchedule)) return s;
  const hit = privateCompiled.get(s.jobId);
  if (hit?.ref === s) return hit.compiled;
  return remember(s, parseSchedule(s));
}

/** Caches the compiled form of a private schedule; returns it. */
export function remember(ref: PrivateSchedule, compiled: Schedule): Schedule {
  // Clearing beats evicting one by one: deleting from the front of a big Map leaves holes V8 rescans.
  if (privateCompiled.size >= PRIVATE_CACHE) privateCompiled.clear();
  privateCompiled.set(ref.jobId, { ref, compiled });
  return compiled;
}

const SECOND = 1000;
/** Chain steps walked in one search before re-anchoring (a 1-second interval down for a day is 86,400). */
const CHAIN_BUDGET = 200_000;

/** Whether the job's schedule produces runs (status 0, or 5 with an end); indefinite pause, 1, 4, 6 and deleted do not. */
export const isScheduled = (job: CronJob) =>
  !job.deleted && (job.status === STATUS.ACTIVE || (job.status === STATUS.PAUSED && job.pausedUntil !== null));

/** Whether queued cron_run runs are emitted: the jobs service accepts cron_run on any job not disabled. */
export const takesQueuedRuns = (job: CronJob) => !job.deleted && job.status !== STATUS.DISABLED && job.status !== STATUS.AUTO_DISABLED;

/** Whether a run due at `t` may still be published (a delayed run: the job may have been paused or disabled since its occurrence). */
export const isRunnableAt = (job: CronJob, t: number) => !job.deleted && effectiveStatus(job, t) === STATUS.ACTIVE;

/** The instant after which occurrences count, given a wish `t`: never before the last re-plan, nor inside a pause with an end. */
export function planFloor(plan: JobPlan, t: number): number {
  let floor = Math.max(plan.since, t);
  const { job } = plan;
  // Occurrences before pausedUntil are skipped, one at pausedUntil runs.
  if (job.status === STATUS.PAUSED && job.pausedUntil !== null) floor = Math.max(floor, job.pausedUntil - 1);
  return floor;
}

/**
 * The job's first occurrence strictly after `t`, ignoring its status. Crontab, one-time and
 * timestamp: the schedule's next run. Interval: the next point of the chain from `anchor`
 * (docs/schedule.md: each run is the expression applied to the previous one). `moveAnchor` moves the
 * anchor up to the last chain point at or before `t`; only callers whose `t` never goes back
 * (the live loop, the catch-up at start) may pass it.
 */
export function occurrenceAfter(plan: JobPlan, t: number, moveAnchor = false): number | null {
  const s = scheduleOf(plan);
  if (!s) return null;
  if (s.kind !== 'interval') return nextRun(s, t);
  let p = plan.anchor;
  const step = elapsedStep(s);
  if (step > 0 && t > p) p += Math.floor((t - p) / step) * step;
  for (let budget = CHAIN_BUDGET; budget > 0; budget--) {
    const next = nextRun(s, p);
    if (next === null) return null;
    if (next > t) {
      if (moveAnchor) plan.anchor = p;
      return next;
    }
    p = next;
  }
  // A calendar chain this far behind (centuries of days): re-anchor rather than spin. Two
  // planners could then disagree, which this budget makes practically impossible.
  if (moveAnchor) plan.anchor = t;
  return nextRun(s, t);
}

/**
 * `delay` (docs/schedule.md): a run is pushed back by 0..delay*60 whole seconds, drawn from (job id,
 * occurrence) so every planner replica and cron_next draw the same amount with no stored state.
 */
export function jitterMs(jobId: number, occurrence: number, delayMinutes: number): number {
  if (!(delayMinutes > 0)) return 0;
  let h = mix((jobId >>> 0) ^ 0x5bd1e995);
  h = mix(h ^ (Math.floor(jobId / 0x100000000) >>> 0));
  h = mix(h ^ (occurrence >>> 0));
  h = mix(h ^ (Math.floor(occurrence / 0x100000000) >>> 0));
  return (h % (delayMinutes * 60 + 1)) * SECOND;
}

/** When the run for occurrence `o` is published: the occurrence plus its delay. */
export const publishAt = (plan: JobPlan, o: number) => o + jitterMs(plan.job.id, o, plan.job.settings.delay);

/** How far before `t` an occurrence may lie and still publish after `t`. */
export const delayMs = (plan: JobPlan) => Math.max(0, plan.job.settings.delay) * 60 * SECOND;

/** Occurrences walked at most for one cron_next answer (a 1-second crontab with a day of delay is 86,400). */
const UPCOMING_BUDGET = 200_000;

/**
 * cron_next: the next `limit` instants (ms, ascending) after `now` at which this job's runs will
 * be published: queued cron_run runs merged with the schedule, after filter, pause and delay.
 */
export function upcomingRuns(plan: JobPlan, now: number, limit: number): number[] {
  const out: number[] = [];
  if (limit <= 0) return out;
  if (plan.queued && takesQueuedRuns(plan.job)) for (const q of plan.queued) if (q.runAt > now) out.push(q.runAt);
  if (isScheduled(plan.job)) {
    const delay = delayMs(plan);
    // With a delay the runs come out of order: an earlier occurrence may publish later. Walk
    // occurrences from `now - delay` and keep the `limit` earliest publish times; stop once an
    // occurrence is past the last kept one (nothing later can publish before it).
    const kept: number[] = [];
    let t = planFloor(plan, now - delay);
    for (let budget = UPCOMING_BUDGET; budget > 0; budget--) {
      const o = occurrenceAfter(plan, t);
      if (o === null || (kept.length === limit && o > kept[limit - 1]!)) break;
      t = o;
      const p = publishAt(plan, o);
      if (p <= now || (kept.length === limit && p >= kept[limit - 1]!)) continue;
      let i = kept.length;
      while (i > 0 && kept[i - 1]! > p) i--;
      kept.splice(i, 0, p);
      if (kept.length > limit) kept.pop();
    }
    out.push(...kept);
  }
  return out.sort((a, b) => a - b).slice(0, limit);
}
