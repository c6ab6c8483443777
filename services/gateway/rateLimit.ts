import { AppError } from '../../shared/errors.ts';

/** Error 12 from a limiter: its message is ours and safe to show; `retryAfter` feeds the Retry-After header. */
export class RateLimitError extends AppError {
  constructor(
    readonly retryAfter: number,
    message = `rate limit exceeded; retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`,
  ) {
    super('RATE_LIMITED', message);
  }
}

/**
 * Token buckets per key (docs/api.md (Requests: rate limit)): `rate` tokens per second up to `burst`. Rate 0 turns the
 * limit off. Buckets idle long enough to be full again are forgotten, so memory stays bounded.
 */
export function createRateLimiter(options: { rate: number; burst: number }, now: () => number = Date.now) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const fullAfterMs = options.rate > 0 ? (options.burst / options.rate) * 1000 : 0;
  let lastSweep = now();

  const waitFor = (tokens: number) => Math.max(1, Math.ceil((1 - tokens) / options.rate));
  return {
    /** The seconds `take` would make this key wait now (0: a token is there), taking nothing. */
    wait(key: string): number {
      const bucket = buckets.get(key);
      if (options.rate <= 0 || !bucket) return 0;
      const tokens = Math.min(options.burst, bucket.tokens + ((now() - bucket.at) / 1000) * options.rate);
      return tokens >= 1 ? 0 : waitFor(tokens);
    },
    /**
     * What the RateLimit-* headers tell a client after a call: whole requests left now, and the
     * seconds until the next one is there (0 when one is). A client that waits `reset` when
     * `remaining` is 0 is never refused.
     */
    state(key: string): { remaining: number; reset: number } {
      const bucket = buckets.get(key);
      if (options.rate <= 0 || !bucket) return { remaining: options.burst, reset: 0 };
      const tokens = Math.min(options.burst, bucket.tokens + ((now() - bucket.at) / 1000) * options.rate);
      return { remaining: Math.floor(tokens), reset: tokens >= 1 ? 0 : waitFor(tokens) };
    },
    /** Takes one token; returns 0 when allowed, otherwise the seconds to wait (Retry-After). */
    take(key: string): number {
      if (options.rate <= 0) return 0;
      const t = now();
      if (t - lastSweep > 60_000) {
        for (const [k, b] of buckets) if (t - b.at > fullAfterMs) buckets.delete(k);
        lastSweep = t;
      }
      const bucket = buckets.get(key) ?? { tokens: options.burst, at: t };
      bucket.tokens = Math.min(options.burst, bucket.tokens + ((t - bucket.at) / 1000) * options.rate);
      bucket.at = t;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return waitFor(bucket.tokens);
    },
  };
}
