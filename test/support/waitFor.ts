/** Falsy values: what `waitFor` keeps polling on. */
export type Falsy = false | null | undefined | 0 | '';

export interface WaitOptions {
  /** The pause between checks. Default 10 ms. */
  everyMs?: number;
  /** A check that throws counts as "not yet" (a server still starting), not as a failure; the last error is in the timeout's message. */
  retryErrors?: boolean;
}

/** For what runs in containers (test/deploy): a check a second, and a check that throws (a pod still starting) is "not yet". */
export const SLOWLY: WaitOptions = { everyMs: 1000, retryErrors: true };

/**
 * Polls `check` (real time) until it returns a truthy value, and returns that value; fails after
 * `timeoutMs`, naming `what` it waited for. The one way tests wait for something to happen.
 */
export async function waitFor<T>(check: () => T | Falsy | Promise<T | Falsy>, what: string, timeoutMs = 10_000, options: WaitOptions = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    let value: T | Falsy = false;
    try {
      value = await check();
    } catch (error) {
      if (!options.retryErrors) throw error;
      lastError = error;
    }
    if (value) return value;
    if (Date.now() > deadline) {
      const cause = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(options.everyMs ?? 10);
  }
}

/** A real pause: only where time passing is the point (an outage's length), never to wait for an event. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
