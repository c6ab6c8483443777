import { AppError } from '../../shared/errors.ts';
import { SCHEDULE_SETTINGS, TARGET_SETTINGS, evolveJob, type CronJob, type JobEvent } from '../../shared/job/index.ts';
import { AccountStatus } from './accountStatus.ts';
import type { PlannedRun, Watermark } from './catchUp.ts';
import { compactJob } from './compactJob.ts';
import { skippedWhileDisabled } from './disabledRuns.ts';
import { JobPlan, isScheduled, occurrenceAfter, planFloor, upcomingRuns, type QueuedRun } from './occurrences.ts';
import { oweBeforeChange, type Owed } from './owedBeforeChange.ts';
import { SharedSchedules } from './sharedSchedules.ts';

export { JobPlan, type QueuedRun } from './occurrences.ts';

/** What an event did to a job's plan, so the loop knows what to re-arm. */
export type PlanChange =
  | { kind: 'none' }
  /** Timing may have changed: plan the job again from its next occurrence. `created`: the job is new, so no run of it is out. */
  | { kind: 'replan'; plan: JobPlan; skipped?: PlannedRun | null; created?: true }
  /** A cron_run was queued. */
  | { kind: 'queued'; plan: JobPlan; run: QueuedRun }
  /** Deleted (or its account disabled) at `at`: forget it. */
  | { kind: 'removed'; jobId: number; at: number };

const NONE: PlanChange = { kind: 'none' };

/**
 * The planner's schedule projection: for every live job, its folded state (with the shared job
 * model's `evolveJob`, the fold the jobs service uses too), its compiled schedule and queued
 * cron_runs. Pure: events in, plans out, no clock and no I/O. Deleted jobs are forgotten at once.
 *
 * Re-planning follows the event's own time (`at`), not the planner's clock, so two replicas and a
 * rebuild after a restart compute the same occurrences and so the same run ids.
 */
export class ScheduleProjection {
  readonly plans = new Map<number, JobPlan>();
  /** Position of the last event applied. */
  position = -1n;
  private readonly schedules = new SharedSchedules();
  /** Which accounts are disabled (from the account events the planner applies with applyAccount). */
  readonly accounts = new AccountStatus();
  /** Each account's last disabled stretch, and the position of the event that ended it. */
  private readonly disabledSpans = new Map<number, { from: number; to: number; position: bigint }>();
  /** The jobs of disabled accounts: folded as their events come, planned again when the account is enabled. */
  private readonly parked = new Map<number, JobPlan>();
  /**
   * Job ids by account, for account_calendar: plain arrays (8 bytes an id, a million jobs in 8 MB),
   * appended at creation; a deleted job's id is dropped when its account's list is next read.
   */
  private readonly byAccount = new Map<number, number[]>();

  /** True while the planner rebuilds (until its start sweep): changes then may leave runs owed by earlier versions. */
  catchingUp = true;
  /** Per job (deleted ones too), what versions it had while no planner ran still owe (owedBeforeChange.ts). */
  readonly owed = new Map<number, Owed>();

  /** `watermark`: the last one the planner recorded, so queued runs it already published are not queued again. */
  constructor(private readonly watermark: Watermark | null = null) {}

  get size() {
    return this.plans.size;
  }

  /** Schedules that failed to compile (never for events the jobs service validated). */
  get compileErrors() {
    return this.schedules.compileErrors;
  }

  get(jobId: number): JobPlan | undefined {
    return this.plans.get(jobId);
  }

  /** Applies one event of stream `cronjob-<jobId>` at `position`. */
  apply(jobId: number, event: JobEvent, position: bigint): PlanChange {
    this.position = position;
    const fresh = this.watermark !== null && position > this.watermark.position;
    if (event.type === 'JobCreated') {
      const folded = evolveJob(null, event)!;
      // The event's own settings object (as decoded, of one shape) is kept as it is: the jobs view
      // holds the same object, so a job is one settings object in memory, not two. Settings
      // completed with defaults (an event of an older Tock) were spread, and are compacted.
      const job = compactJob(folded, folded.settings !== event.data.settings);
      const at = job.createdAt;
      // An account enabled again after this job's creation: its occurrences count from the enable.
      const since = Math.max(at, this.accounts.floorOf(job.accountId));
      const plan = new JobPlan(job, this.schedules.compile(job), since, at, since, (this.plans.get(jobId)?.version ?? 0) + 1, null, fresh);
      const own = this.byAccount.get(job.accountId);
      if (own) own.push(jobId);
      else this.byAccount.set(job.accountId, [jobId]);
      if (this.accounts.isDisabled(job.accountId)) {
        this.parked.set(jobId, plan);
        return NONE;
      }
      this.plans.set(jobId, plan);
      return { kind: 'replan', plan, created: true };
    }
    // A badge changes nothing the planner keeps (and its token reaches the planner sealed).
    if (event.type === 'BadgeIssued' || event.type === 'BadgeRevoked') return NONE;
    const parked = this.parked.get(jobId);
    if (parked) return this.applyParked(jobId, parked, event);
    const plan = this.plans.get(jobId);
    if (!plan) return NONE;
    // The version before a change no planner saw live, for what it owes (see replan).
    const old = this.catchingUp && fresh && event.type !== 'RunRequested' ? new JobPlan(plan.job, plan.schedule, plan.since, plan.anchor, plan.cursor, plan.version, null, plan.fresh) : null;
    if (event.type === 'JobDeleted') {
      if (old) this.owe(jobId, old, event.data.at);
      this.plans.delete(jobId);
      return { kind: 'removed', jobId, at: event.data.at };
    }
    const before = plan.job;
    plan.job = compactJob(evolveJob(before, event) as CronJob, event.type === 'JobEdited');
    const at = event.data.at;
    switch (event.type) {
      case 'JobEdited': {
        const { changes } = event.data;
        if (!SCHEDULE_SETTINGS.some((f) => changes[f] !== undefined && changes[f] !== before.settings[f])) {
          // Runs put on the bus ahead of time carry the old request: re-plan (same chain) to replace them.
          const retarget = TARGET_SETTINGS.some((f) => changes[f] !== undefined && changes[f] !== before.settings[f]);
          return retarget ? this.replan(plan, at, fresh, old) : NONE;
        }
        // A new schedule starts over from the edit: an interval's first run is the expression
        // applied to the edit time (docs/schedule.md), and the change takes effect for the next run.
        plan.schedule = this.schedules.compile(plan.job);
        plan.anchor = at;
        return this.replan(plan, at, fresh, old);
      }
      case 'JobDisabled':
      case 'JobAutoDisabled':
        plan.queued = null; // a disabled job runs nothing, not even what was asked before
        return this.replan(plan, at, fresh, old);
      case 'JobEnabled':
      case 'JobPaused':
      case 'JobStopped':
        return this.replan(plan, at, fresh, old);
      case 'RunRequested': {
        const { runId, runAt, payload } = event.data;
        // Published before the last watermark: already out.
        if (this.watermark && !fresh && runAt <= this.watermark.at) return NONE;
        const run = { runId, runAt, payload };
        (plan.queued ??= []).push(run);
        return { kind: 'queued', plan, run };
      }
      default:
        // FailureCounted, FailuresReset: no effect on timing.
        return NONE;
    }
  }

  /**
   * Applies an account event (stream `account-<accountId>`). Disabling takes the account's jobs
   * out of the plan (their runs ahead are cancelled like a deleted job's); enabling plans them
   * again from the enable time, as enabling a job does.
   */
  applyAccount(accountId: number, event: { type: string; data: { at?: number } }, position: bigint): PlanChange[] {
    const change = this.accounts.apply(accountId, event);
    if (!change) return [];
    const changes: PlanChange[] = [];
    if (change.disabled) {
      for (const [jobId, plan] of this.plans) {
        if (plan.job.accountId !== accountId) continue;
        this.plans.delete(jobId);
        plan.queued = null;
        this.parked.set(jobId, plan);
        changes.push({ kind: 'removed', jobId, at: change.at });
      }
      return changes;
    }
    const fresh = this.watermark !== null && position > this.watermark.position;
    this.disabledSpans.set(accountId, { from: change.disabledAt ?? change.at, to: change.at, position });
    for (const [jobId, plan] of this.parked) {
      if (plan.job.accountId !== accountId) continue;
      this.parked.delete(jobId);
      this.plans.set(jobId, plan);
      // Counted before the re-plan moves the plan past the disabled time.
      const skipped = skippedWhileDisabled(plan, Math.max(change.disabledAt ?? change.at, plan.since), change.at);
      changes.push({ ...this.replan(plan, change.at, fresh), skipped });
    }
    return changes;
  }

  /**
   * The skip record a rebuilt plan owes: its account was enabled by an event after `position` (the
   * last watermark's), so the planner that applied it live may not have published it. Rebuilt, a
   * job's plan starts at the enable; the record counts from the disable (or the job's creation).
   */
  skippedSince(plan: JobPlan, position: bigint): PlannedRun | null {
    const span = this.disabledSpans.get(plan.job.accountId);
    if (!span || span.position <= position || plan.job.createdAt >= span.to) return null;
    return skippedWhileDisabled(plan, Math.max(span.from, plan.job.createdAt), span.to);
  }

  /** Whether the job is one of a disabled account's (it has no next run while so). */
  isParked(accountId: number, jobId: number): boolean {
    return this.parked.get(jobId)?.job.accountId === accountId;
  }

  /** A parked job's events keep its state current (a schedule edit, a delete) without planning anything. */
  private applyParked(jobId: number, plan: JobPlan, event: JobEvent): PlanChange {
    if (event.type === 'JobDeleted') {
      this.parked.delete(jobId);
      return NONE;
    }
    if (event.type === 'RunRequested') return NONE;
    const before = plan.job;
    plan.job = compactJob(evolveJob(before, event) as CronJob, event.type === 'JobEdited');
    if (event.type === 'JobEdited' && SCHEDULE_SETTINGS.some((f) => event.data.changes[f] !== undefined && event.data.changes[f] !== before.settings[f])) {
      plan.schedule = this.schedules.compile(plan.job);
      plan.anchor = event.data.at;
    }
    return NONE;
  }

  /** Removes a queued run once published. */
  dequeue(plan: JobPlan, runId: string) {
    if (!plan.queued) return;
    const i = plan.queued.findIndex((q) => q.runId === runId);
    if (i >= 0) plan.queued.splice(i, 1);
    if (plan.queued.length === 0) plan.queued = null;
  }

  /** The account's planned jobs (a disabled account has none), in creation order. */
  plansOf(accountId: number): JobPlan[] {
    const ids = this.byAccount.get(accountId);
    if (!ids) return [];
    const kept = ids.filter((id) => this.plans.has(id) || this.parked.has(id));
    if (kept.length < ids.length) this.byAccount.set(accountId, kept);
    return kept.flatMap((id) => this.plans.get(id) ?? []);
  }

  /** cron_next: the next `limit` publish instants (ms) after `now`. Unknown, deleted or another account's job: NOT_FOUND. */
  nextRuns(accountId: number, jobId: number, now: number, limit: number): number[] {
    const plan = this.plans.get(jobId);
    if (!plan && this.isParked(accountId, jobId)) return [];
    if (!plan || plan.job.accountId !== accountId) throw new AppError('NOT_FOUND', `cron job ${jobId} not found`);
    return upcomingRuns(plan, now, limit);
  }

  private replan(plan: JobPlan, at: number, fresh: boolean, old: JobPlan | null = null): Extract<PlanChange, { kind: 'replan' }> {
    if (old) this.owe(plan.job.id, old, at);
    plan.since = Math.max(plan.since, at);
    plan.cursor = Math.max(plan.cursor, plan.since);
    plan.version++;
    plan.fresh ||= fresh;
    return { kind: 'replan', plan };
  }

  private owe(jobId: number, old: JobPlan, at: number) {
    if (!this.watermark) return;
    const owed = this.owed.get(jobId) ?? { runs: [], count: 0 };
    oweBeforeChange(old, this.watermark, at, owed);
    if (owed.count > 0) this.owed.set(jobId, owed);
  }
}

/**
 * The next occurrence the live loop should wake for after `plan` was (re-)planned or its last
 * occurrence committed: the first after its cursor, or null when the job is not scheduled.
 */
export function nextTick(plan: JobPlan): number | null {
  if (!isScheduled(plan.job)) return null;
  return occurrenceAfter(plan, planFloor(plan, plan.cursor), true);
}
