import type { SupervisedRun } from '../supervise.ts';
import type { EventHandler, EventStore, SubscribeOptions } from './eventStore.ts';

/**
 * One run of a catch-up subscription for `supervise()`: subscribes after `options.fromPosition`,
 * resolves once caught up (rejects if it fails first), and its `ended` rejects when it fails
 * later. `onLost` hears the failure at once (to fail waiting requests before the restart).
 */
export async function subscriptionRun(
  store: EventStore,
  options: SubscribeOptions,
  handler: EventHandler,
  onLost?: (error: unknown) => void,
): Promise<SupervisedRun> {
  let fail!: (error: unknown) => void;
  const ended = new Promise<never>((_, reject) => (fail = reject));
  ended.catch(() => undefined);
  const subscription = store.subscribe(options, handler, (error) => {
    onLost?.(error);
    fail(error);
  });
  try {
    await Promise.race([subscription.caughtUp, ended]);
  } catch (error) {
    await subscription.close();
    throw error;
  }
  return { ended, stop: () => subscription.close() };
}
