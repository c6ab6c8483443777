/** Waiting in the deployment test's steps (no import with side effects: the unit tests load it). */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(fn: () => Promise<T | false | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await fn().catch(() => false as const);
    if (v) return v;
    await sleep(1000);
  }
  throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
}
