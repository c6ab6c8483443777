import { AppError } from '../errors.ts';
import type { Decider } from '../decider.ts';
import type { Trigger } from './trigger.ts';

/**
 * Merging: a quiet account's first notification goes out at once (once its triggers stop coming
 * for a moment, so the failures of one moment travel together), and what follows within the merge window (60 s by
 * default) after a notification is merged into the next one, sent when that window closes. A dead
 * upstream failing 500 jobs produces one or two emails, not 500. The decision is an event of
 * `notifybatch-<accountId>`, appended with the revision read, so two notifier replicas never
 * decide the same trigger twice.
 */

export const DEFAULT_MERGE_WINDOW_MS = 60_000;
/**
 * How long a quiet account's first notification waits for one more trigger (never longer than the
 * window): jobs due at the same instant against a host that is down fail within a moment of each
 * other.
 */
export const FIRST_GATHER_MS = 2_000;
/** Decisions kept in a `notifybatch-<accountId>` stream (a decision reads them all). */
export const DECISIONS_KEPT = 5000;
/**
 * A trigger not merged within a day (the notifier was down that long) is dropped, not sent late;
 * this also keeps a trigger whose decision fell out of the kept decisions from being sent again.
 */
export const TRIGGER_STALE_MS = 24 * 60 * 60_000;

/** One channel's share of a notification: the triggers of the jobs that notify this channel. */
export interface Route {
  channelId: number;
  keys: string[];
}

export interface NotificationDecided {
  id: string;
  accountId: number;
  at: number;
  triggers: Trigger[];
  routes: Route[];
}

export type BatchEvent = { type: 'NotificationDecided'; data: NotificationDecided };

export interface BatchState {
  /** Trigger keys already part of a notification (the most recent ones). */
  decided: string[];
}

export interface DecideNotification {
  id: string;
  accountId: number;
  triggers: Trigger[];
  /** The account's channels able to take a message now, and after how long a failure each hears of it (0: always). */
  channels: RouteChannel[];
}

export interface RouteChannel {
  id: number;
  escalateAfter: number;
}

const KEYS_KEPT = 20_000;

/** When the oldest and the newest of an account's pending triggers were decided. */
export interface PendingSpan {
  oldest: number;
  newest: number;
}

/** The span of these pending triggers; null when there is none. */
export function pendingSpan(pending: Iterable<Pick<Trigger, 'at'>>): PendingSpan | null {
  let oldest = Infinity;
  let newest = -Infinity;
  for (const t of pending) {
    oldest = Math.min(oldest, t.at);
    newest = Math.max(newest, t.at);
  }
  return oldest === Infinity ? null : { oldest, newest };
}

/**
 * When an account's pending triggers become a notification. A quiet account (no notification
 * decided within the window before): once no trigger has come for the gather, so a burst (a host
 * down under fifty jobs, its failures recorded one by one) travels whole, but never later than
 * the window after the oldest. Otherwise: when the window after its last notification closes.
 */
export function notificationDueAt(span: PendingSpan, lastDecidedAt: number | undefined, windowMs: number): number {
  const quietFrom = lastDecidedAt === undefined ? -Infinity : lastDecidedAt + windowMs;
  return Math.max(quietFrom, Math.min(span.oldest + windowMs, span.newest + Math.min(windowMs, FIRST_GATHER_MS)));
}

/**
 * Which channels take which triggers: a job naming channels notifies only those; an escalation
 * channel takes only the triggers of a failure that passed its threshold, the others every trigger
 * not meant for escalation channels alone.
 */
export function routesFor(triggers: Trigger[], channels: readonly RouteChannel[]): Route[] {
  const takes = (c: RouteChannel, t: Trigger) => (c.escalateAfter > 0 ? (t.escalated ?? 0) >= c.escalateAfter : !t.onlyEscalation);
  return channels
    .map((c) => ({ channelId: c.id, keys: triggers.filter((t) => (t.job.channels === null || t.job.channels.includes(c.id)) && takes(c, t)).map((t) => t.key) }))
    .filter((r) => r.keys.length > 0);
}

export const batchDecider: Decider<DecideNotification, BatchState, BatchEvent> = {
  initialState: () => ({ decided: [] }),
  evolve(state, event) {
    if (event.type !== 'NotificationDecided') return state;
    const decided = [...state.decided, ...event.data.triggers.map((t) => t.key)];
    return { decided: decided.length > KEYS_KEPT ? decided.slice(-KEYS_KEPT) : decided };
  },
  decide(command, state, now) {
    if (command.triggers.some((t) => t.job.accountId !== command.accountId)) throw new AppError('INTERNAL', 'a notification mixes accounts');
    const taken = new Set(state.decided);
    const fresh = command.triggers.filter((t) => !taken.has(t.key));
    if (!fresh.length) return [];
    return [{ type: 'NotificationDecided', data: { id: command.id, accountId: command.accountId, at: now, triggers: fresh, routes: routesFor(fresh, command.channels) } }];
  },
};

/** The category of an account's notification decisions. */
export const BATCH_CATEGORY = 'notifybatch';
/**
 * The category those decisions had before, one letter from the delivery category's old name
 * (`notification`). Stores written then still hold it: the notifier view reads it too, and the
 * deliveries of a notification decided there stay in the old delivery category.
 */
export const OLD_BATCH_CATEGORY = 'notifications';

export const batchStream = (accountId: number) => `${BATCH_CATEGORY}-${accountId}`;
