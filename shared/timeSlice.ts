const SLICE_MS = 2;

/**
 * Cooperative time slicing for loops that process many items on the main thread (a batch of
 * jobs, a page of events, a planner sweep): `await slice()` between items gives the event loop a
 * turn (setImmediate) once the current slice has run SLICE_MS, so other requests, timers and health
 * checks are served while the loop works. Between turns it costs one clock read.
 *
 * 2 ms, because slices add up: several loops may be slicing at once (a batch's writes, the
 * jobs view and the planner each following the store), and one turn of the event loop runs a
 * slice of each before timers and I/O get theirs. With 5 ms slices a /healthz answer took up
 * to 45 ms of work to come back during a 1000-job batch; with 2 ms, 19-24 ms.
 */
export function timeSlicer({ yieldFirst = false }: { yieldFirst?: boolean } = {}): () => Promise<void> | undefined {
  // yieldFirst: the first call gives a turn at once, for a loop that comes right after other
  // heavy work of the same turn (decoding the batch it goes through).
  let started = yieldFirst ? -Infinity : performance.now();
  return () => {
    if (performance.now() - started < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        started = performance.now();
        resolve();
      }),
    );
  };
}

/**
 * `Promise.all` over `count` tasks started in slices, with at most `concurrency` unsettled at
 * once. Started all together, the tasks' continuations (a decision, then an append, for each job
 * of a batch) would all come due in one turn of the event loop, however sliced the loop that
 * started them; with a small window, one turn holds only a few of them.
 */
export async function slicedAll<T>(count: number, task: (i: number) => Promise<T>, concurrency = 16, slice = timeSlicer()): Promise<T[]> {
  const results: Promise<T>[] = [];
  const running = new Set<Promise<unknown>>();
  for (let i = 0; i < count; i++) {
    await slice();
    while (running.size >= concurrency) await Promise.race(running);
    const pending = task(i);
    // Handled by Promise.all below; until then a failure must not count as unhandled.
    const settled: Promise<boolean> = pending.then(
      () => running.delete(settled),
      () => running.delete(settled),
    );
    running.add(settled);
    results.push(pending);
  }
  return Promise.all(results);
}

/**
 * `items.map(fn)` in slices: for answers of up to 1000 jobs, whose conversion (to records, to
 * protobuf messages) is the largest piece of work left in one turn when done in one go.
 */
export async function slicedMap<T, U>(items: readonly T[], fn: (item: T, i: number) => U, slice = timeSlicer()): Promise<U[]> {
  const out: U[] = [];
  for (const [i, item] of items.entries()) {
    await slice();
    out.push(fn(item, i));
  }
  return out;
}
