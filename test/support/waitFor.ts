/** Falsy values: what `waitFor` keeps polling on. */
export type Falsy = false | null | undefined | 0 | '';

/**
 * Polls `check` (real time) until it returns a truthy value, and returns that value; fails after
 * `timeoutMs`, naming `what` it waited for. The one way tests wait for something to happen.
 */
export async function waitFor<T>(check: () => T | Falsy | Promise<T | Falsy>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** A real pause: only where time passing is the point (an outage's length), never to wait for an event. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
