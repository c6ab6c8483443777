/**
 * Work taken in slices a turn of the event loop apart. A bus hands over thousands of due runs at
 * once (a frame from the owning thread, a pull batch), and handling them all in one go holds back
 * every timer that falls due meanwhile: at the top of a second, the runs due now would wait for
 * the next second's runs to be taken in. Between two slices the timers phase runs.
 */
export function createSlices(size: number, defer: (fn: () => void) => void = setImmediate) {
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
