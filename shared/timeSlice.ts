const SLICE_MS = 2;

/**
 * Cooperative time slicing for loops that process many items on the main thread (a batch of
 * jobs, a page of events, a planner sweep): `await slice()` between items gives the event loop a
 * turn (setImmediate) once the current slice has run SLICE_MS, so other requests, timers and health
 * checks are served while the loop works. Between turns it costs one clock read.
 *
 * Short slices, because they add up: several loops may be slicing at once (a batch's writes, the
 * jobs view and the planner each following the store), and one turn of the event loop runs a
 * slice of each before timers and I/O get theirs.
 *
 * One module for both ways of slicing: by time here (a loop that checks the clock between items),
 * by count in slicedQueue (work handed over in bulk, queued and taken a slice per turn).
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

/**
 * Work taken in slices a turn of the event loop apart. A bus hands over thousands of due runs at
 * once (a frame from the owning thread, a pull batch), and handling them all in one go holds back
 * every timer that falls due meanwhile: at the top of a second, the runs due now would wait for
 * the next second's runs to be taken in. Between two slices the timers phase runs.
 */
export function slicedQueue(size: number, defer: (fn: () => void) => void = setImmediate) {
  let queue: (() => void)[] = [];
  let head = 0;
  let scheduled = false;

  const drain = () => {
    scheduled = false;
    const end = Math.min(queue.length, head + size);
    while (head < end) queue[head++]!();
    if (head < queue.length) schedule();
    else [queue, head] = [[], 0];
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    defer(drain);
  };

  return {
    /** Runs `work` in a later slice; resolves (or rejects) as it does. */
    run<T>(work: () => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push(() => void work().then(resolve, reject));
        schedule();
      });
    },
  };
}
