import { AppError } from '../errors.ts';
import { WrongExpectedRevisionError, type EventStore } from './eventStore.ts';

/**
 * Integer ids from an append with expected revision on `ids-<kind>`: unique across every process
 * sharing the event store, increasing, never reused. A batch takes one block.
 */
export function createIdAllocator(store: EventStore) {
  // Within a process, allocations queue up instead of racing each other into conflicts.
  let queue: Promise<unknown> = Promise.resolve();
  const trimmed = new Set<string>();

  const allocateNow = async (kind: string, count: number): Promise<number[]> => {
    const stream = `ids-${kind}`;
    if (!trimmed.has(stream)) {
      // Only the last block matters; the stream must not grow with every id ever handed out.
      await store.setStreamMaxCount(stream, 16);
      trimmed.add(stream);
    }
    for (let attempt = 1; attempt <= 50; attempt++) {
      const [last] = await store.readStream<{ first: number; count: number }>(stream, { direction: 'backwards', maxCount: 1 });
      const first = last ? last.data.first + last.data.count : 1;
      try {
        await store.appendToStream(stream, [{ type: 'IdsAllocated', data: { first, count } }], {
          expectedRevision: last ? last.revision : 'no_stream',
        });
        return Array.from({ length: count }, (_, i) => first + i);
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        await new Promise((r) => setTimeout(r, Math.random() * 3 * attempt));
      }
    }
    throw new AppError('CONFLICT', `could not allocate ${kind} ids under contention; try again`);
  };

  return {
    allocate(kind: 'cronjob' | 'group' | 'account' | 'channel', count: number): Promise<number[]> {
      const result = queue.then(() => allocateNow(kind, count));
      queue = result.catch(() => undefined);
      return result;
    },
    /** One id: the common case of creating a single entity. */
    async allocateOne(kind: 'cronjob' | 'group' | 'account' | 'channel'): Promise<number> {
      const [id] = await this.allocate(kind, 1);
      if (id === undefined) throw new Error(`allocating one ${kind} id returned none`);
      return id;
    },
  };
}
