import type { Decider } from '../decider.ts';

/**
 * Delivery of one notification to its channels, as events of `notifydelivery-<id>`:
 * a sender first CLAIMS an attempt (appended with the revision it read, so a second replica or a
 * restarted one cannot claim it too), then sends, then records the outcome. A claim whose sender
 * died (kill -9) expires after the lease and the attempt is made again: a message is never lost,
 * and only a crash in the middle of a send can repeat it.
 */

export const MAX_ATTEMPTS = 5;
export const DEFAULT_LEASE_MS = 60_000;

export interface RetryPolicy {
  /** First retry after about this long; doubled each attempt, with jitter. */
  baseMs: number;
  maxMs: number;
}
export const DEFAULT_RETRY: RetryPolicy = { baseMs: 10_000, maxMs: 15 * 60_000 };

/**
 * Exponential backoff with jitter (50-150 % of the step), never sooner than the receiver's
 * `Retry-After`. `random` is injectable so the rule has exact specs.
 */
export function retryDelay(attempt: number, policy: RetryPolicy, retryAfterMs: number | null, random: () => number = Math.random): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.round(step * (0.5 + random()));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, 6 * 60 * 60_000));
}

export type DeliveryStatus = 'pending' | 'claimed' | 'delivered' | 'abandoned';

export interface ChannelDelivery {
  status: DeliveryStatus;
  attempts: number;
  /** Claimed: the lease end; pending: not before. */
  until: number;
  lastError: string;
}

export type DeliveryState = Record<string, ChannelDelivery>;

export type DeliveryEvent =
  | { type: 'DeliveryClaimed'; data: { channelId: number; attempt: number; until: number; at: number } }
  | { type: 'DeliveryAttempted'; data: { channelId: number; attempt: number; outcome: 'failed'; error: string; retryAt: number | null; at: number } }
  | { type: 'Delivered'; data: { channelId: number; attempt: number; at: number } }
  | { type: 'DeliveryAbandoned'; data: { channelId: number; reason: string; at: number } };

export type DeliveryCommand =
  | { type: 'Claim'; channelId: number; leaseMs: number }
  | { type: 'Record'; channelId: number; attempt: number; ok: boolean; error: string; retryAt: number | null }
  | { type: 'Abandon'; channelId: number; reason: string };

export const pendingDelivery = (): ChannelDelivery => ({ status: 'pending', attempts: 0, until: 0, lastError: '' });

/** Whether a claim may be taken now: pending and due, or claimed by a sender whose lease ran out. */
export const claimable = (d: ChannelDelivery, now: number) => (d.status === 'pending' || d.status === 'claimed') && d.until <= now;

export function evolveDelivery(state: DeliveryState, event: DeliveryEvent): DeliveryState {
  const key = String(event.data.channelId);
  const d = state[key] ?? pendingDelivery();
  switch (event.type) {
    case 'DeliveryClaimed':
      return { ...state, [key]: { ...d, status: 'claimed', attempts: event.data.attempt, until: event.data.until } };
    case 'DeliveryAttempted':
      return {
        ...state,
        [key]: { ...d, status: event.data.retryAt === null ? 'abandoned' : 'pending', until: event.data.retryAt ?? 0, lastError: event.data.error },
      };
    case 'Delivered':
      return { ...state, [key]: { ...d, status: 'delivered', lastError: '' } };
    case 'DeliveryAbandoned':
      return { ...state, [key]: { ...d, status: 'abandoned', lastError: event.data.reason } };
    default:
      return state;
  }
}

export function decideDelivery(command: DeliveryCommand, state: DeliveryState, now: number): DeliveryEvent[] {
  const d = state[String(command.channelId)] ?? pendingDelivery();
  switch (command.type) {
    case 'Claim':
      if (!claimable(d, now)) return [];
      if (d.attempts >= MAX_ATTEMPTS) return [{ type: 'DeliveryAbandoned', data: { channelId: command.channelId, reason: `gave up after ${d.attempts} attempts`, at: now } }];
      return [{ type: 'DeliveryClaimed', data: { channelId: command.channelId, attempt: d.attempts + 1, until: now + command.leaseMs, at: now } }];
    case 'Record':
      // Only the holder of the current claim may record: a sender whose lease was taken over is late.
      if (d.status !== 'claimed' || d.attempts !== command.attempt) return [];
      if (command.ok) return [{ type: 'Delivered', data: { channelId: command.channelId, attempt: command.attempt, at: now } }];
      return [{
        type: 'DeliveryAttempted',
        data: { channelId: command.channelId, attempt: command.attempt, outcome: 'failed', error: command.error, retryAt: command.attempt >= MAX_ATTEMPTS ? null : command.retryAt, at: now },
      }];
    case 'Abandon':
      return d.status === 'delivered' || d.status === 'abandoned' ? [] : [{ type: 'DeliveryAbandoned', data: { channelId: command.channelId, reason: command.reason, at: now } }];
  }
}

export const deliveryDecider: Decider<DeliveryCommand, DeliveryState, DeliveryEvent> = {
  initialState: () => ({}),
  evolve: evolveDelivery,
  decide: decideDelivery,
};

/** The category of a notification's deliveries. */
export const DELIVERY_CATEGORY = 'notifydelivery';
/** Their category before (see OLD_BATCH_CATEGORY): a notification decided under the old name keeps its deliveries there. */
export const OLD_DELIVERY_CATEGORY = 'notification';

export const deliveryStream = (notificationId: string, category = DELIVERY_CATEGORY) => `${category}-${notificationId}`;

/** The `webhook-id` of a notification's message to one channel: every attempt of that delivery carries it. */
export const deliveryId = (notificationId: string, channelId: number) => `msg_${notificationId}_${channelId}`;
