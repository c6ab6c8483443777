import type { HttpResult } from './httpCall.ts';

/**
 * When a failed attempt is tried again, and after how long (Tock's `retries` and `retryBackoff`).
 * Pure: the random source and the time are passed in.
 *
 * Retried: failures that may pass — no connection (DNS, connect, reset, TLS), a timeout, HTTP
 * 5xx and 429. Never: other 4xx (the request itself is wrong), a 2xx that failed its keyword or
 * pattern check, a target the egress guard refused, a bad URL or too many redirects.
 */
export const RETRY_CAP_MS = 60 * 60_000;

export function shouldRetry(result: Pick<HttpResult, 'error' | 'httpStatus' | 'transient'>): boolean {
  if (result.error) return result.transient;
  const status = result.httpStatus;
  return status === 429 || (status >= 500 && status <= 599);
}

/**
 * The wait before the attempt after `failedAttempt` (1 = the first call): exponential from
 * `backoffSeconds` with full jitter (a uniform draw below the exponential step, so many jobs that
 * failed together do not come back together), capped; a Retry-After of a 429 or 503 answer is
 * honoured within the cap.
 */
export function retryDelayMs(
  failedAttempt: number,
  backoffSeconds: number,
  result: Pick<HttpResult, 'httpStatus' | 'retryAfter'>,
  now: number,
  random: () => number = Math.random,
): number {
  const step = Math.min(RETRY_CAP_MS, backoffSeconds * 1000 * 2 ** Math.max(0, failedAttempt - 1));
  const jittered = Math.floor(random() * step);
  const asked = result.httpStatus === 429 || result.httpStatus === 503 ? parseRetryAfter(result.retryAfter, now) : null;
  return Math.min(RETRY_CAP_MS, Math.max(jittered, asked ?? 0));
}

/** Retry-After as delay-seconds or an HTTP date, in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
