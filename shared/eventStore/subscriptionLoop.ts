import type { Subscription } from './eventStore.ts';

/** What a subscription's loop shares with the subscription that runs it. */
export interface LoopState {
  /** Set by close() (and by a failure): the loop ends at its next check. */
  stopped: boolean;
  /** Ends the loop's current wait for appends early; the loop sets it while it waits. */
  interrupt: (() => void) | undefined;
  /** Resolves the subscription's `caughtUp`. */
  markCaughtUp: () => void;
}

/**
 * The part every adapter's subscription shares around its own read-and-wait loop: `caughtUp`,
 * a close() that interrupts the wait and resolves once no handler call runs, membership in the
 * store's set (so closing the store closes it), and failures going to `onError`. The loop starts
 * at once, as the adapters' loops always did (SQLite's first page is handled synchronously).
 */
export function runSubscription(subscriptions: Set<Subscription>, loop: (state: LoopState) => Promise<void>, onError?: (error: unknown) => void): Subscription {
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
  const state: LoopState = { stopped: false, interrupt: undefined, markCaughtUp: () => markCaughtUp() };
  const running = loop(state).catch((error) => {
    // The handler's own errors reach onError untouched; store failures arrive already translated.
    state.stopped = true;
    if (onError) onError(error);
    else console.error('event store subscription stopped:', error);
  });
  const subscription: Subscription = {
    caughtUp,
    async close() {
      state.stopped = true;
      state.interrupt?.();
      await running;
      subscriptions.delete(subscription);
    },
  };
  subscriptions.add(subscription);
  return subscription;
}
