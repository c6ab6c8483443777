import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { streamIdOf, type EventStore, type RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { subscriptionRun } from '../../shared/eventStore/subscriptionRun.ts';
import type { Logger } from '../../shared/log.ts';
import type { Readiness } from '../../shared/readiness.ts';
import { supervise, type Supervisor } from '../../shared/supervise.ts';
import { slicedMap } from '../../shared/timeSlice.ts';
import { CANCELS_STREAM, ensureTopology } from '../../shared/topology.ts';
import { dueRunSubject } from '../../shared/subjects/planner.ts';
import type { CronJob, JobEvent } from '../../shared/job/index.ts';
import { AccountSecrets } from './accountSecrets.ts';
import { createCancelNotices } from './cancelNotices.ts';
import type { PlannedRun, Watermark } from './catchUp.ts';
import { Dispatcher, type DispatchStats } from './dispatcher.ts';
import { createDueRunEncoder, encodeLater } from './dueRun.ts';
import { entryOf, fireEntry, isCurrentEntry, QUEUED, TICK, type Entry, type FireContext } from './firing.ts';
import { nextTick, ScheduleProjection, type JobPlan, type PlanChange } from './scheduleProjection.ts';
import { accountCalendar } from './calendar.ts';
import { DueTimer } from './dueTimer.ts';
import { startSweep } from './startSweep.ts';
import { EntryHeap } from './entryHeap.ts';
import { readWatermark, WATERMARK_KEEP, WATERMARK_STREAM, writeWatermark } from './watermark.ts';

export interface PlannerOptions {
  store: EventStore;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** Runs missed by at most this much when the planner starts are published one by one; older ones collapse into one late run per job. Default 10 s. */
  misfireMs?: number;
  /** Publishes in flight at once. Default 256. */
  concurrency?: number;
  /** How often the watermark is recorded. Default 1 s. */
  watermarkEveryMs?: number;
  /**
   * Runs are put on the bus this long before they are due; executors hold them and fire at the
   * instant, so the work of planning, publishing and decoding is done before the top of a second
   * or minute, not during it. A job change sends a cancel notice for runs already out. Default 0.
   */
  leadMs?: number;
  /** Gets the `planner schedule` condition: false while catching up or resubscribing. */
  readiness?: Readiness;
}

/**
 * The planner's loop: projects schedules from job events, keeps the next instant of every job in
 * a min-heap, wakes on its head (one clock timer, no polling tick), publishes each run as a
 * DueRun with its run id as the bus message id, and records a watermark once everything due up
 * to an instant is acked. Exactly once per occurrence comes from deterministic run ids plus the
 * bus's de-duplication, so a second replica or a replay after a restart publishes nothing twice.
 */
export class Planner {
  projection = new ScheduleProjection();
  private readonly heap: EntryHeap;
  private readonly dispatcher: Dispatcher;
  private readonly misfireMs: number;
  private readonly watermarkEveryMs: number;
  private supervisor: Supervisor | null = null;
  private accountSupervisor: Supervisor | null = null;
  /** Position of the last account event applied (a restarted subscription resumes after it). */
  private accountPosition = -1n;
  /** Signing secrets per account, from the account events: every due run carries its account's. */
  readonly secrets = new AccountSecrets();
  private readonly timer: DueTimer;
  private watermarkTimer: (() => void) | null = null;
  private watermark: Watermark | null = null;
  private writing: Promise<void> | null = null;
  private readonly leadMs: number;
  /** Jobs with runs on the bus that are not due yet: job id -> the latest such due time. */
  private readonly ahead = new Map<number, number>();
  private readonly encodeDueRun = createDueRunEncoder();
  private readonly firing: FireContext;
  /** While the start sweep runs: new events wait for it. */
  private sweeping: Promise<void> | null = null;
  private readonly cancels: ReturnType<typeof createCancelNotices>;

  /** Started and not stopped: events are planned as they come. */
  private get live() {
    return this.timer.live;
  }

  constructor(private readonly options: PlannerOptions) {
    this.misfireMs = options.misfireMs ?? 10_000;
    this.watermarkEveryMs = options.watermarkEveryMs ?? 1000;
    this.leadMs = Math.max(0, options.leadMs ?? 0);
    this.heap = new EntryHeap((jobId, version) => this.projection.get(jobId)?.version === version, (e) => isCurrentEntry(this.projection, e), this.leadMs);
    this.dispatcher = new Dispatcher(options.bus, options.clock, options.log, options.concurrency ?? 256);
    this.cancels = createCancelNotices(options);
    this.timer = new DueTimer(this.heap, options.clock, (e, now) => fireEntry(this.firing, this.projection, e, now));
    this.firing = {
      misfireMs: this.misfireMs,
      leadMs: this.leadMs,
      push: (e) => this.heap.push(e),
      enqueue: (plan, order) => this.enqueue(plan, order),
    };
  }

  /** Rebuilds the projection from the store, publishes what was missed while down, then runs live. */
  async start() {
    const { store, bus, clock, log } = this.options;
    await ensureTopology(bus);
    await bus.ensureStream(CANCELS_STREAM);
    await store.setStreamMaxCount(WATERMARK_STREAM, WATERMARK_KEEP);
    const watermark = await readWatermark(store);
    this.watermark = watermark;
    this.projection = new ScheduleProjection(watermark);
    const started = Date.now();
    // Accounts first, so the runs published while catching up are signed already.
    this.accountSupervisor = supervise({
      name: 'planner accounts',
      log,
      readiness: this.options.readiness,
      start: () =>
        subscriptionRun(store, { category: 'account', fromPosition: this.accountPosition >= 0n ? this.accountPosition : undefined }, (event) => this.onAccountEvent(event)),
    });
    await this.accountSupervisor.started;
    // Supervised: a failed subscription resumes after the last event applied, with backoff.
    this.supervisor = supervise({
      name: 'planner schedule',
      log,
      readiness: this.options.readiness,
      start: () => subscriptionRun(store, { category: 'cronjob', fromPosition: this.projection.position >= 0n ? this.projection.position : undefined }, (event) => this.onEvent(event)),
    });
    await this.supervisor.started;
    const rebuiltMs = Date.now() - started;
    // Everything applied so far is planned here in one sweep, in time slices (a million schedules
    // take seconds); events that arrive meanwhile wait for it, then are planned as they come.
    let sweepDone!: () => void;
    this.sweeping = new Promise<void>((resolve) => (sweepDone = resolve));
    const { due } = await startSweep({
      projection: this.projection,
      watermark,
      now: clock.now(),
      misfireMs: this.misfireMs,
      enqueue: (plan, order) => this.enqueue(plan, order),
      entry: (plan, kind, at, occurrence) => this.entry(plan, kind, at, occurrence),
      push: (e) => this.heap.push(e),
    });
    this.projection.catchingUp = false;
    this.timer.live = true;
    this.sweeping = null;
    sweepDone();
    this.timer.arm();
    this.scheduleWatermark();
    log.info('planner started', { jobs: this.projection.size, rebuiltMs, catchUpRuns: due, watermark: watermark?.at ?? null, compileErrors: this.projection.compileErrors });
  }

  /** Stops. `flush` (default): waits for due runs to be acked and records a last watermark; false behaves like a crash. */
  async stop(options: { flush?: boolean } = {}) {
    this.timer.stop();
    this.watermarkTimer?.();
    this.watermarkTimer = null;
    await this.supervisor?.stop();
    await this.accountSupervisor?.stop();
    if (options.flush ?? true) {
      await Promise.race([this.dispatcher.idle(), new Promise((r) => setTimeout(r, 5000).unref())]);
      await this.writing;
      await this.recordWatermark().catch((error) => this.options.log.warn('last watermark not recorded', { error }));
    }
    await this.dispatcher.stop();
    this.cancels.stop();
  }

  /** Resolves once every run due so far is acked by the bus (tests; shutdown). */
  async idle() {
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (this.live && this.timer.pending()) {
        this.timer.arm();
        continue;
      }
      await this.dispatcher.idle();
      if (!this.live || !this.timer.pending()) return;
    }
  }

  stats(): DispatchStats & { jobs: number; heap: number } {
    return { ...this.dispatcher.stats(), jobs: this.projection.size, heap: this.heap.size };
  }

  /** cron_next: Unix seconds, ascending, at most `limit` (1..100, default 10). */
  nextRuns(accountId: number, jobId: number, limit: number): number[] {
    const n = limit > 0 ? Math.min(limit, 100) : 10;
    return this.projection.nextRuns(accountId, jobId, this.options.clock.now(), n).map((ms) => Math.floor(ms / 1000));
  }

  /** account_calendar: the runs of the account's jobs in the next `spanMs`, capped (calendar.ts). */
  calendar(accountId: number, spanMs: number, perJob: number, limit: number) {
    const now = this.options.clock.now();
    return accountCalendar(this.projection, accountId, now, now + spanMs, perJob, limit);
  }

  /** The nextRun of job records: Unix seconds per id, 0 when none (also for unknown or another account's ids). In time slices: a page may hold 1000 costly schedules. */
  async nextRunOf(accountId: number, jobIds: number[]): Promise<number[]> {
    const now = this.options.clock.now();
    return slicedMap(jobIds, (id) => {
      const plan = this.projection.get(id);
      const [first] = plan && plan.job.accountId === accountId ? this.projection.nextRuns(accountId, id, now, 1) : [];
      return first === undefined ? 0 : Math.floor(first / 1000);
    });
  }

  private onEvent(event: RecordedEvent): void | Promise<void> {
    // The subscription waits for the returned promise, so events keep their order.
    if (this.sweeping) return this.sweeping.then(() => this.onEvent(event));
    const id = Number(streamIdOf(event.stream));
    if (!Number.isSafeInteger(id)) return;
    const change = this.projection.apply(id, { type: event.type, data: event.data as unknown } as JobEvent, event.position);
    if (this.live) this.replan(change);
  }

  private onAccountEvent(event: RecordedEvent): void | Promise<void> {
    this.accountPosition = event.position;
    const id = Number(streamIdOf(event.stream));
    if (Number.isSafeInteger(id)) this.secrets.apply(id, { type: event.type, data: event.data as { signingSecret?: string; at: number } });
    return this.onAccountStatus(event);
  }

  private onAccountStatus(event: RecordedEvent): void | Promise<void> {
    if (event.type !== 'AccountDisabled' && event.type !== 'AccountEnabled') return;
    if (this.sweeping) return this.sweeping.then(() => this.onAccountStatus(event));
    const id = Number(streamIdOf(event.stream));
    if (!Number.isSafeInteger(id)) return;
    const changes = this.projection.applyAccount(id, event, event.position);
    if (this.live) for (const change of changes) this.replan(change);
    // The runs a disabled account's jobs did not make, recorded once it is enabled again (while
    // rebuilding, the start sweep does it: see skippedSince).
    if (this.live) for (const change of changes) if (change.kind === 'replan' && change.skipped) this.enqueue(change.plan, change.skipped);
    this.options.log.info(event.type === 'AccountDisabled' ? 'account disabled: its jobs are not planned' : 'account enabled: its jobs are planned again', { accountId: id, jobs: changes.length });
  }

  private replan(change: PlanChange) {
    if (change.kind === 'none') return;
    // Gone: no occurrence after the change runs, even one out ahead already (none is published again).
    if (change.kind === 'removed') this.cancels.cancel(change.jobId, change.at, change.at);
    else if (change.kind === 'replan' && !change.created) {
      // Runs out ahead of their time carry the old state: plan again from the change, so the
      // occurrences after it go out anew (and those out already are cancelled). A new job has
      // none out: a notice would be one more stored message per job of a batch, for nothing.
      if (this.hadAhead(change.plan.job.id, change.plan.since)) change.plan.cursor = change.plan.since;
      this.cancels.cancel(change.plan.job.id, change.plan.since, change.plan.cursor);
    }
    if (change.kind === 'removed') this.heap.invalidated();
    else if (change.kind === 'queued') this.heap.push({ ...this.entry(change.plan, QUEUED, change.run.runAt, change.run.runAt), runId: change.run.runId });
    else {
      this.heap.invalidated();
      const next = nextTick(change.plan);
      if (next !== null) this.heap.push(this.entry(change.plan, TICK, next, next));
    }
    this.timer.arm();
  }

  private entry(plan: JobPlan, kind: Entry['kind'], due: number, occurrence: number): Entry {
    return entryOf(plan, kind, due, occurrence, this.leadMs);
  }

  /**
   * Whether runs of the job due after the change's instant `since` went out (and forgets them: a
   * change re-plans them). After the change, not after now: a planner that applies the change
   * late (it lagged, or NATS was away) has runs out for occurrences past by now but after the
   * change, which the change makes stale all the same.
   */
  private hadAhead(jobId: number, since: number): boolean {
    const until = this.ahead.get(jobId);
    this.ahead.delete(jobId);
    return until !== undefined && until > since;
  }

  /** `plan`: the job's plan, or an earlier version it owes a run from (owedBeforeChange.ts). */
  private enqueue(plan: { job: CronJob; since: number }, order: PlannedRun) {
    // The job state is immutable (evolveJob returns new objects): holding it is the snapshot.
    const { job, since } = plan;
    const plannedAt = this.options.clock.now();
    if (order.scheduledAt > plannedAt) this.ahead.set(job.id, Math.max(order.scheduledAt, this.ahead.get(job.id) ?? 0));
    // Scheduled runs: the same id in every replica and after a restart, but a new one after a re-plan.
    const msgId = order.manual || order.skip ? order.runId : `${order.runId}@${since}`;
    this.dispatcher.enqueue({ order, msgId, subject: dueRunSubject(job.id), encode: encodeLater(this.encodeDueRun, job, order, { plannedAt, planSince: order.manual ? 0 : since }, this.secrets.keysOf(job.accountId, plannedAt)) });
  }

  private scheduleWatermark() {
    const { clock, log } = this.options;
    this.watermarkTimer = clock.setTimer(clock.now() + this.watermarkEveryMs, () => {
      this.watermarkTimer = null;
      this.writing = this.recordWatermark()
        .catch((error) => log.warn('recording the planner watermark failed', { error }))
        .finally(() => {
          this.writing = null;
          if (this.live) this.scheduleWatermark();
        });
    });
  }

  /** Everything due before the earliest run not yet acked (or not yet popped from the heap) is out. */
  private async recordWatermark() {
    const now = this.options.clock.now();
    const head = this.heap.headAt();
    const at = Math.min(now, this.dispatcher.lowestPending() - 1, head !== undefined ? head - 1 : Infinity);
    if (this.watermark && at <= this.watermark.at) return;
    const w = { at, position: this.projection.position };
    await writeWatermark(this.options.store, w);
    this.watermark = w;
  }
}
