import { watchConsumers } from '../metrics.ts';
import type { Bus } from './bus.ts';

/**
 * The same bus, with every durable consumed through it reported in the metrics (its backlog,
 * read from the bus at scrape time: nothing is added to a message's path).
 */
export function measuredBus<B extends Bus>(bus: B): B {
  const watched = new Set<() => void>();
  return {
    ...bus,
    async consume(options, handler) {
      const consumer = await bus.consume(options, handler);
      const unwatch = watchConsumers(bus, [options]);
      watched.add(unwatch);
      return {
        async stop() {
          unwatch();
          watched.delete(unwatch);
          await consumer.stop();
        },
      };
    },
    async close() {
      for (const unwatch of watched) unwatch();
      watched.clear();
      await bus.close();
    },
  };
}
