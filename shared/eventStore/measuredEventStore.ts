import { storeMetrics } from '../metrics.ts';
import type { EventStore } from './eventStore.ts';

/**
 * The same event store, timed: append latency, and per subscription how long catching up took,
 * how old each delivered event is, and (once caught up) append-to-handler latency. Wraps any adapter.
 */
export function measuredEventStore(store: EventStore): EventStore {
  return {
    async appendToStream(stream, events, options) {
      const end = storeMetrics.append.startTimer();
      try {
        return await store.appendToStream(stream, events, options);
      } finally {
        end();
      }
    },
    async appendMany(appends) {
      const end = storeMetrics.append.startTimer();
      try {
        return await store.appendMany(appends);
      } finally {
        end();
      }
    },
    readStream: (stream, options) => store.readStream(stream, options),
    subscribe(options, handler, onError) {
      const category = options.category ?? '$all';
      const lag = storeMetrics.lag.labels(category);
      const delivery = storeMetrics.delivery.labels(category);
      const started = performance.now();
      let live = false;
      const subscription = store.subscribe(
        options,
        (event) => {
          const age = Math.max(0, Date.now() - event.time) / 1000;
          lag.set(age);
          if (live) delivery.observe(age);
          return handler(event);
        },
        onError,
      );
      subscription.caughtUp.then(
        () => {
          live = true;
          storeMetrics.catchUp.labels(category).set((performance.now() - started) / 1000);
        },
        () => {},
      );
      return subscription;
    },
    setStreamMaxCount: (stream, maxCount) => store.setStreamMaxCount(stream, maxCount),
    close: () => store.close(),
  };
}
