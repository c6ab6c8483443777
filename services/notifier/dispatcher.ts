import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { handleCommand } from '../../shared/eventStore/handleCommand.ts';
import type { Logger } from '../../shared/log.ts';
import {
  batchDecider,
  DECISIONS_KEPT,
  batchStream,
  channelDecider,
  channelStream,
  claimable,
  notificationDueAt,
  deliveryDecider,
  deliveryId,
  pendingDelivery,
  retryDelay,
  type NotificationDecided,
  type PendingSpan,
  type RetryPolicy,
  type Route,
  type Trigger,
} from '../../shared/notify/index.ts';
import type { NotifierView, OpenNotification } from './notifierView.ts';
import type { Senders } from './senders.ts';

/** How often a sent delivery's outcome is tried again while the store refuses it. */
export const RECORD_RETRY_MS = 200;
const RECORD_RETRY_MAX_MS = 2000;

export const MAX_TRIGGERS_PER_NOTIFICATION = 500;

export interface DispatcherOptions {
  store: EventStore;
  view: NotifierView;
  senders: Senders;
  clock: Clock;
  log: Logger;
  windowMs: number;
  leaseMs: number;
  retry: RetryPolicy;
  random?: () => number;
  /** Called once per notification this replica decided (the bus feed for third parties). */
  onDecided?: (decided: NotificationDecided) => Promise<void>;
  /** Called after each delivery attempt (metrics). */
  onAttempt?: (channelType: string, outcome: 'delivered' | 'failed') => void;
}

/**
 * Wakes when something is due (a merge window closing, a delivery or its retry, a dead sender's
 * lease running out), and acts through the event store only: merge pending triggers into a
 * notification, claim a delivery, send, record. Every step is an append with the revision read,
 * so replicas (or a restarted process) taking the same step at once leave one of them a no-op.
 */
export function createDispatcher(options: DispatcherOptions) {
  const { store, view, senders, clock, log } = options;
  const now = () => clock.now();
  const inFlight = new Set<string>();
  let cancelTimer: (() => void) | null = null;
  let timerAt = Infinity;
  let running = false;
  let again = false;
  let stopped = false;

  const dueOf = (open: OpenNotification, route: Route) => {
    const d = open.deliveries[String(route.channelId)] ?? pendingDelivery();
    return d.status === 'pending' || d.status === 'claimed' ? Math.max(d.until, open.decided.at) : Infinity;
  };

  const dueAt = (accountId: number, span: PendingSpan) => notificationDueAt(span, view.lastDecidedAt(accountId), options.windowMs);

  function nextDue(): number {
    let next = Infinity;
    for (const [accountId, span] of view.pendingSpans()) next = Math.min(next, dueAt(accountId, span));
    for (const open of view.openNotifications()) {
      for (const route of open.decided.routes) if (!inFlight.has(`${open.decided.id}:${route.channelId}`)) next = Math.min(next, dueOf(open, route));
    }
    return next;
  }

  function schedule() {
    if (stopped) return;
    const at = nextDue();
    if (at === Infinity || at >= timerAt) return;
    cancelTimer?.();
    timerAt = at;
    cancelTimer = clock.setTimer(at, () => {
      timerAt = Infinity;
      cancelTimer = null;
      void tick();
    });
  }

  const trimmed = new Set<number>();
  async function decideBatch(accountId: number, triggers: Trigger[]) {
    if (!trimmed.has(accountId)) {
      await store.setStreamMaxCount(batchStream(accountId), DECISIONS_KEPT);
      trimmed.add(accountId);
    }
    const channels = view.channelsOf(accountId).filter((c) => c.enabled).map((c) => ({ id: c.id, escalateAfter: c.escalateAfter }));
    const result = await handleCommand(store, { stream: batchStream(accountId), decider: batchDecider, command: { id: randomUUID(), accountId, triggers, channels }, now });
    for (const event of result.events) {
      log.info('notification decided', { id: event.data.id, accountId, triggers: event.data.triggers.length, channels: event.data.routes.map((r) => r.channelId) });
      await options.onDecided?.(event.data).catch((error) => log.warn('notification not published on the bus', { id: event.data.id, error }));
    }
    await view.waitFor(result.position);
  }

  async function untilStored<T>(what: string, fields: Record<string, unknown>, append: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await append();
      } catch (error) {
        if (stopped) throw error;
        log.warn(what, { ...fields, tries: attempt, error });
        await new Promise((r) => setTimeout(r, Math.min(RECORD_RETRY_MAX_MS, RECORD_RETRY_MS * attempt)));
      }
    }
  }

  async function deliver(open: OpenNotification, route: Route) {
    const { id } = open.decided;
    const stream = open.deliveryStream;
    const channel = view.channel(route.channelId);
    if (!channel || channel.deleted || !channel.enabled) {
      const reason = !channel || channel.deleted ? 'the channel was deleted' : `the channel is disabled${channel.lastError ? ` (last error: ${channel.lastError})` : ''}`;
      const r = await handleCommand(store, { stream, decider: deliveryDecider, command: { type: 'Abandon', channelId: route.channelId, reason }, now });
      await view.waitFor(r.position);
      return;
    }
    const claim = await handleCommand(store, { stream, decider: deliveryDecider, command: { type: 'Claim', channelId: channel.id, leaseMs: options.leaseMs }, now });
    const claimed = claim.events.find((e) => e.type === 'DeliveryClaimed');
    if (!claimed) {
      await view.waitFor(claim.position);
      return;
    }
    const attempt = claimed.data.attempt;
    const triggers = open.decided.triggers.filter((t) => route.keys.includes(t.key));
    const outcome = await senders.send(channel, triggers, now(), deliveryId(id, channel.id));
    const retryAt = outcome.ok ? null : now() + retryDelay(attempt, options.retry, outcome.retryAfterMs, options.random);
    // Sent: the outcome must be stored, or the claim's lease runs out and the message goes again.
    // An append that failed (the store restarting, or its answer lost after commit) is retried
    // until it lands; Record is a no-op once stored, and the delivery stays in flight meanwhile.
    const recorded = await untilStored('notification outcome not recorded; retrying', { notification: id, channel: channel.id, attempt }, () =>
      handleCommand(store, { stream, decider: deliveryDecider, command: { type: 'Record', channelId: channel.id, attempt, ok: outcome.ok, error: outcome.error, retryAt }, now }),
    );
    const health = await handleCommand(store, { stream: channelStream(channel.id), decider: channelDecider, command: { type: 'RecordAttempt', id: channel.id, ok: outcome.ok, error: outcome.error }, now });
    options.onAttempt?.(channel.type, outcome.ok ? 'delivered' : 'failed');
    const fields = { notification: id, channel: channel.id, type: channel.type, attempt };
    if (outcome.ok) log.info('notification delivered', fields);
    else log.warn('notification delivery failed', { ...fields, error: outcome.error, ...(outcome.detail ? { detail: outcome.detail } : {}), retryAt });
    if (health.events.some((e) => e.type === 'ChannelDisabled')) log.warn('channel disabled after repeated failures', { channel: channel.id, error: outcome.error });
    await view.waitFor(health.position ?? recorded.position);
  }

  async function tick() {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const at = now();
      for (const [accountId, span] of [...view.pendingSpans()]) {
        if (dueAt(accountId, span) > at) continue;
        // A bounded event and message: beyond this, the rest follow in the next notification.
        const triggers = [...(view.pendingByAccount().get(accountId)?.values() ?? [])].sort((a, b) => a.at - b.at).slice(0, MAX_TRIGGERS_PER_NOTIFICATION);
        if (triggers.length) await decideBatch(accountId, triggers).catch((error) => log.error('notification decision failed', { accountId, error }));
      }
      for (const open of [...view.openNotifications()]) {
        for (const route of open.decided.routes) {
          const key = `${open.decided.id}:${route.channelId}`;
          const d = open.deliveries[String(route.channelId)] ?? pendingDelivery();
          if (inFlight.has(key) || !claimable(d, at) || open.decided.at > at) continue;
          inFlight.add(key);
          void deliver(open, route)
            .catch((error) => log.error('notification delivery step failed', { notification: open.decided.id, channel: route.channelId, error }))
            .finally(() => {
              inFlight.delete(key);
              schedule();
            });
        }
      }
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      void tick();
    } else schedule();
  }

  view.onChange = () => schedule();

  return {
    /** Looks for due work now (after start, and by tests after moving the clock). */
    tick,
    schedule,
    /** Deliveries being sent right now by this replica. */
    busy: () => inFlight.size,
    async stop() {
      stopped = true;
      cancelTimer?.();
      while (inFlight.size) await new Promise((r) => setTimeout(r, 10));
    },
  };
}
