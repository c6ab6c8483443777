import type { CronJob } from '../../shared/job/index.ts';
import { scheduledRun, type PlannedRun, type Watermark } from './catchUp.ts';
import { JobPlan, delayMs, isScheduled, occurrenceAfter, planFloor, publishAt } from './occurrences.ts';

/** An occurrence a job owed under a version it had while no planner ran, before a change of that time. */
export interface OwedRun {
  /** The job as it was then (job states are immutable: holding it is the snapshot). */
  job: CronJob;
  /** That version's plan_since. */
  since: number;
  occurrence: number;
  publishAt: number;
}

/** Owed runs kept one by one per job; older ones are only counted (they collapse into a late run anyway). */
const KEPT = 1000;

/** What a job owes from versions it had while no planner ran: the last ones, and how many in all. */
export interface Owed {
  runs: OwedRun[];
  count: number;
}

/**
 * Called while the planner rebuilds, for a change the last watermark does not cover, with the plan
 * as it was before it: the occurrences of that version, from where the watermark left off up to
 * the change, are owed. The catch-up at start sees only the job's latest version and counts from
 * its last change (`since`), so without this a job edited (or paused, or deleted) while every
 * planner was down lost the runs due between the outage's start and the edit.
 */
export function oweBeforeChange(plan: JobPlan, watermark: Watermark, until: number, owed: Owed) {
  if (!isScheduled(plan.job)) return;
  // A copy: walking an interval's chain moves its anchor.
  const old = new JobPlan(plan.job, plan.schedule, plan.since, plan.anchor, plan.cursor, plan.version, null, plan.fresh);
  const done = old.fresh ? -Infinity : watermark.at;
  let t = planFloor(old, old.fresh ? old.since : watermark.at - delayMs(old));
  for (;;) {
    const o = occurrenceAfter(old, t, true);
    if (o === null || o > until) return;
    t = o;
    const p = publishAt(old, o);
    if (p <= done || p > until) continue;
    owed.runs.push({ job: old.job, since: old.since, occurrence: o, publishAt: p });
    owed.count++;
    if (owed.runs.length > KEPT * 2) owed.runs = owed.runs.slice(-KEPT);
  }
}

/**
 * What the owed runs become at the planner's start, by the misfire rule: those due within
 * `misfireMs` of now one by one, the older ones as one late run standing for all of them (the
 * latest one's run id). Each carries the version it was owed under.
 */
export function owedAtStart(owed: Owed, now: number, misfireMs: number): { order: PlannedRun; job: CronJob; since: number }[] {
  const recent = owed.runs.filter((r) => now - r.publishAt <= misfireMs);
  const older = owed.runs.filter((r) => now - r.publishAt > misfireMs);
  const out = [];
  const latest = older.at(-1);
  if (latest) {
    const missed = owed.count - recent.length;
    out.push({ order: late(latest, now, missed), job: latest.job, since: latest.since });
  }
  for (const r of recent) out.push({ order: late(r, now, 0), job: r.job, since: r.since });
  return out;
}

const late = (r: OwedRun, now: number, missed: number) =>
  scheduledRun({ job: r.job } as JobPlan, r.occurrence, r.publishAt, { missed, lateByMs: Math.max(0, now - r.publishAt) });
