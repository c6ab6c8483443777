/**
 * Cooperative time slicing for loops that process many items on the main thread (a batch of
 * jobs, a page of events, a planner sweep): `await slice()` between items gives the event loop a
 * turn (setImmediate) once the current slice has run `ms`, so other requests, timers and health
 * checks are served while the loop works. Between turns it costs one clock read.
 */
export function timeSlicer(ms = 10): () => Promise<void> | undefined {
  let started = performance.now();
  return () => {
    if (performance.now() - started < ms) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        started = performance.now();
        resolve();
      }),
    );
  };
}
