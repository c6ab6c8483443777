/** How long a view waits after one refresh ends before the next. */
export const REFRESH_MS = 5000;

/**
 * Runs `tick` now and then `everyMs` after each tick ends (never two at once, so a slow answer or
 * a rate-limited token slows the refresh instead of piling up calls). While the tab is hidden it
 * stops; it ticks at once when the tab shows again. Returns the stop function.
 */
export function poll(tick: () => Promise<void>, everyMs = REFRESH_MS): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = false;
  /** The tab showed again during a tick: tick again when it ends, not a whole period later. */
  let again = false;
  let stopped = false;
  const schedule = () => {
    clearTimeout(timer);
    if (!stopped && !document.hidden) timer = setTimeout(run, everyMs);
  };
  async function run() {
    if (stopped || running || document.hidden) return;
    running = true;
    try {
      await tick();
    } catch {
      // The view shows its own errors; the next tick tries again.
    } finally {
      running = false;
      if (again) {
        again = false;
        void run();
      } else schedule();
    }
  }
  const onVisibility = () => {
    if (document.hidden) clearTimeout(timer);
    else if (running) again = true;
    else void run();
  };
  document.addEventListener('visibilitychange', onVisibility);
  void run();
  return () => {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisibility);
  };
}
