import { subscriptionRun } from '../../shared/eventStore/subscriptionRun.ts';
import type { Logger } from '../../shared/log.ts';
import type { Readiness } from '../../shared/readiness.ts';
import { supervise, type Supervisor } from '../../shared/supervise.ts';
import { categoryOf, streamIdOf, type EventStore, type RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import {
  BATCH_CATEGORY,
  DELIVERY_CATEGORY,
  OLD_BATCH_CATEGORY,
  OLD_DELIVERY_CATEGORY,
  deliveryStream,
  pendingSpan,
  channelDecider,
  evolveDelivery,
  evolveJobNotify,
  initialJobNotifyState,
  type BatchEvent,
  type Channel,
  type ChannelEvent,
  type DeliveryEvent,
  type DeliveryState,
  type JobNotifyEvent,
  type JobNotifyState,
  type NotificationDecided,
  type PendingSpan,
  type Trigger,
  TRIGGER_STALE_MS,
} from '../../shared/notify/index.ts';
import { evolveJobRecord, jobFacts, type JobRecord } from './jobFacts.ts';

/** A decided notification whose deliveries are not all final yet. */
export interface OpenNotification {
  decided: NotificationDecided;
  deliveries: DeliveryState;
  /** Where its deliveries are recorded: the old category for a notification decided under the old name. */
  deliveryStream: string;
}

/** The categories whose events can make a notification due or change one (the dispatcher looks again). */
const NOTIFYING_CATEGORIES = new Set(['notifyjob', BATCH_CATEGORY, OLD_BATCH_CATEGORY, DELIVERY_CATEGORY, OLD_DELIVERY_CATEGORY, 'channel']);

/**
 * The notifier's read model, projected in memory from the event store at every start: the jobs,
 * groups and accounts it needs to decide, the channels, the triggers not yet merged into a
 * notification, and the notifications not yet delivered everywhere. Disposable by construction.
 */
export class NotifierView {
  private jobs = new Map<number, JobRecord>();
  private groupNames = new Map<number, string>();
  private disabledAccounts = new Set<number>();
  private channels = new Map<number, Channel>();
  /** Channel ids by account: the rules look up an account's escalation channels for every failure. */
  private channelIds = new Map<number, Set<number>>();
  private notifyStates = new Map<number, JobNotifyState>();
  /** Per account: triggers decided by the rules and not yet part of a notification. */
  private pending = new Map<number, Map<string, Trigger>>();
  /** Per account: when its oldest and newest pending triggers were decided. */
  private spans = new Map<number, PendingSpan>();
  /** Per account: when its latest notification was decided (the merge window runs from it). */
  private lastDecided = new Map<number, number>();
  private open = new Map<string, OpenNotification>();
  private position = -1n;
  private waiters: { position: bigint; resolve: () => void }[] = [];
  private supervisor: Supervisor | null = null;
  constructor(private readonly now: () => number = Date.now) {}
  /** Called after each applied event: the dispatcher looks again for what is due. */
  onChange: () => void = () => undefined;

  /**
   * Catches up, then stays subscribed: a subscription that fails is started again from the last
   * event applied, with backoff (the notifier is unready meanwhile).
   */
  async start(store: EventStore, options: { log: Logger; readiness?: Readiness }) {
    this.supervisor = supervise({
      name: 'notifier view',
      log: options.log,
      readiness: options.readiness,
      start: () => subscriptionRun(store, { fromPosition: this.position >= 0n ? this.position : undefined }, (event) => this.apply(event)),
    });
    await this.supervisor.started;
  }

  async stop() {
    await this.supervisor?.stop();
  }

  waitFor(position: bigint | null): Promise<void> {
    if (position === null || this.position >= position) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ position, resolve }));
  }

  apply(event: RecordedEvent) {
    const category = categoryOf(event.stream);
    const key = streamIdOf(event.stream);
    switch (category) {
      case 'cronjob': {
        const job = evolveJobRecord(this.jobs.get(Number(key)), event.type, event.data);
        if (job) this.jobs.set(job.id, job);
        break;
      }
      case 'group': {
        const { name } = event.data as { name?: string };
        if ((event.type === 'GroupCreated' || event.type === 'GroupEdited') && name) this.groupNames.set(Number(key), name);
        break;
      }
      case 'account':
        if (event.type === 'AccountDisabled') this.disabledAccounts.add(Number(key));
        if (event.type === 'AccountEnabled') this.disabledAccounts.delete(Number(key));
        break;
      case 'channel': {
        const channel = channelDecider.evolve(this.channels.get(Number(key)) ?? null, event as unknown as ChannelEvent);
        if (channel) {
          this.channels.set(channel.id, channel);
          const ids = this.channelIds.get(channel.accountId) ?? new Set<number>();
          this.channelIds.set(channel.accountId, ids.add(channel.id));
        }
        break;
      }
      case 'notifyjob':
        this.applyNotifyJob(Number(key), event as unknown as JobNotifyEvent);
        break;
      case BATCH_CATEGORY:
        this.applyDecided(event as unknown as BatchEvent, DELIVERY_CATEGORY);
        break;
      case OLD_BATCH_CATEGORY:
        this.applyDecided(event as unknown as BatchEvent, OLD_DELIVERY_CATEGORY);
        break;
      case DELIVERY_CATEGORY:
      case OLD_DELIVERY_CATEGORY: {
        const open = this.open.get(key);
        if (open) {
          open.deliveries = evolveDelivery(open.deliveries, event as unknown as DeliveryEvent);
          if (open.decided.routes.every((r) => isFinal(open.deliveries, r.channelId))) this.open.delete(key);
        }
        break;
      }
    }
    this.position = event.position;
    if (this.waiters.length) {
      const ready = this.waiters.filter((w) => w.position <= this.position);
      this.waiters = this.waiters.filter((w) => w.position > this.position);
      for (const w of ready) w.resolve();
    }
    if (NOTIFYING_CATEGORIES.has(category)) this.onChange();
  }

  private applyNotifyJob(jobId: number, event: JobNotifyEvent) {
    this.notifyStates.set(jobId, evolveJobNotify(this.notifyStates.get(jobId) ?? initialJobNotifyState(), event));
    if (event.type !== 'NotificationTriggered') return;
    const trigger = event.data.trigger;
    // Rebuilding after a long outage: old triggers are history, not news (see TRIGGER_STALE_MS).
    if (trigger.at < this.now() - TRIGGER_STALE_MS) return;
    const pending = this.pending.get(trigger.job.accountId) ?? new Map<string, Trigger>();
    pending.set(trigger.key, trigger);
    this.pending.set(trigger.job.accountId, pending);
    const span = this.spans.get(trigger.job.accountId);
    this.spans.set(trigger.job.accountId, { oldest: Math.min(span?.oldest ?? Infinity, trigger.at), newest: Math.max(span?.newest ?? -Infinity, trigger.at) });
  }

  private applyDecided(event: BatchEvent, deliveryCategory: string) {
    if (event.type !== 'NotificationDecided') return;
    const decided = event.data;
    this.lastDecided.set(decided.accountId, Math.max(this.lastDecided.get(decided.accountId) ?? 0, decided.at));
    const pending = this.pending.get(decided.accountId);
    // A trigger is always stored before the decision that takes it: deleting it here is enough.
    for (const t of decided.triggers) pending?.delete(t.key);
    if (pending && pending.size === 0) {
      this.pending.delete(decided.accountId);
      this.spans.delete(decided.accountId);
    } else if (pending) this.spans.set(decided.accountId, pendingSpan(pending.values())!);
    if (decided.routes.length) this.open.set(decided.id, { decided, deliveries: {}, deliveryStream: deliveryStream(decided.id, deliveryCategory) });
  }

  /** The job as the notifier knows it (deleted ones too), or undefined. */
  job(jobId: number): JobRecord | undefined {
    return this.jobs.get(jobId);
  }

  /** The job's notification state: its snooze, among others. */
  notifyState(jobId: number): JobNotifyState | undefined {
    return this.notifyStates.get(jobId);
  }

  /**
   * The facts the rules need about a job, or undefined when the notifier does not know it.
   * `accountEnabled`: the execution itself proves the account enabled (a disabled account's skip
   * record is published once it is enabled again), whatever this view has applied so far.
   */
  facts(jobId: number, options: { accountEnabled?: boolean } = {}) {
    const job = this.jobs.get(jobId);
    if (!job) return undefined;
    const escalations = new Set<number>();
    for (const c of this.channelsOf(job.accountId)) {
      if (c.enabled && c.escalateAfter > 0 && (job.notifyChannels === null || job.notifyChannels.includes(c.id))) escalations.add(c.escalateAfter);
    }
    const groupName = job.group === null ? '' : (this.groupNames.get(job.group) ?? '');
    return jobFacts(job, groupName, !options.accountEnabled && this.disabledAccounts.has(job.accountId), [...escalations].sort((a, b) => a - b));
  }

  /** Whether the job tells skipped and missed runs (notifySkipped). */
  skipMatters(jobId: number): boolean {
    return this.jobs.get(jobId)?.notifySkipped ?? false;
  }

  /** Whether an execution of this job can matter at all; healthy runs of plain jobs are skipped cheaply. */
  successMatters(jobId: number): boolean {
    const job = this.jobs.get(jobId);
    if (!job) return false;
    const state = this.notifyStates.get(jobId);
    // A failure-rate rule counts successes too: each lowers the rate, and one may end an alert.
    // A snooze until recovery ends at a success.
    return Boolean(job.notifyMatch || job.notifyTime || job.notifyFailureRate || (state && (state.fail > 0 || state.notified || state.snooze)));
  }

  pendingByAccount(): Map<number, Map<string, Trigger>> {
    return this.pending;
  }

  /** When each account's oldest and newest pending triggers were decided. */
  pendingSpans(): Map<number, PendingSpan> {
    return this.spans;
  }

  /** When the account's latest notification was decided; undefined when none is known. */
  lastDecidedAt(accountId: number): number | undefined {
    return this.lastDecided.get(accountId);
  }

  openNotifications(): IterableIterator<OpenNotification> {
    return this.open.values();
  }

  channel(id: number): Channel | undefined {
    return this.channels.get(id);
  }

  /** The account's channels (deleted ones left out), by id. */
  channelsOf(accountId: number): Channel[] {
    return [...(this.channelIds.get(accountId) ?? [])].map((id) => this.channels.get(id)!).filter((c) => !c.deleted).sort((a, b) => a.id - b.id);
  }
}

const isFinal = (deliveries: DeliveryState, channelId: number) => {
  const status = deliveries[String(channelId)]?.status;
  return status === 'delivered' || status === 'abandoned';
};
