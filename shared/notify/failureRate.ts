/**
 * The failure rate of a job's recent runs, for `notifyFailureRate` (at least X% of the runs in the
 * last N minutes failed): the flapping job that fails every other run never reaches N consecutive
 * failures, but half its runs fail.
 *
 * The window slides in 60 buckets of N seconds each (a 60-minute window in minutes, a day's in
 * 24-minute steps), by the runs' scheduled times: the oldest bucket leaves whole, so the window is
 * N minutes give or take one bucket. Its state is small and absolute (each notifyjob event carries
 * it whole, like the failure count), so the rule needs no more of the past than the stream keeps.
 */

export const RATE_BUCKETS = 60;
/** A rate over fewer runs says little (one failed run is 100%): the rule waits for this many in the window. */
export const RATE_MIN_RUNS = 3;

export interface RateWindow {
  /** Seconds per bucket: the window's minutes (60 buckets of N seconds make N minutes). */
  width: number;
  /** [bucket start (Unix seconds), runs, failed runs], oldest first. */
  buckets: [number, number, number][];
  /** An alert was sent and the rate has not fallen below the limit since. */
  alerted: boolean;
}

/** The window with one more run counted: buckets older than the window after the newest leave. A new window size starts afresh. */
export function recordRun(previous: RateWindow | null | undefined, windowMinutes: number, time: number, failed: boolean): RateWindow {
  const width = windowMinutes;
  const same = previous && previous.width === width;
  const buckets = same ? previous.buckets.map(([start, runs, failures]) => [start, runs, failures] as [number, number, number]) : [];
  const start = Math.floor(time / width) * width;
  const bucket = buckets.find((b) => b[0] === start);
  if (bucket) {
    bucket[1] += 1;
    bucket[2] += failed ? 1 : 0;
  } else buckets.push([start, 1, failed ? 1 : 0]);
  const newest = Math.max(...buckets.map((b) => b[0]));
  const kept = buckets.filter((b) => b[0] > newest - RATE_BUCKETS * width).sort((a, b) => a[0] - b[0]);
  return { width, buckets: kept, alerted: same ? previous.alerted : false };
}

export function rateTotals(window: RateWindow): { runs: number; failures: number } {
  let runs = 0;
  let failures = 0;
  for (const [, r, f] of window.buckets) {
    runs += r;
    failures += f;
  }
  return { runs, failures };
}

/** Whether the window's failures reach `percent` of its runs (and it has enough runs to say). */
export function rateReached(window: RateWindow, percent: number): boolean {
  const { runs, failures } = rateTotals(window);
  return runs >= RATE_MIN_RUNS && failures * 100 >= percent * runs;
}

/** "5 of 9 runs in the last 60 minutes failed (56%)" */
export function rateSentence(window: RateWindow, windowMinutes: number): string {
  const { runs, failures } = rateTotals(window);
  return `${failures} of ${runs} run${runs === 1 ? '' : 's'} in the last ${windowMinutes} minute${windowMinutes === 1 ? '' : 's'} failed (${Math.round((failures * 100) / Math.max(1, runs))}%)`;
}
