import compress from 'koa-compress';
import conditional from 'koa-conditional-get';
import etag from '@koa/etag';
import type Koa from 'koa';
import { constants } from 'node:zlib';
import { createRateLimiter, RateLimitError } from './rateLimit.ts';

/**
 * What every answer served without a token goes through (the OpenAPI document, the dashboard's
 * files, /metrics): a limit per client address, then compressed as the client accepts (brotli or
 * gzip) and cacheable (an ETag, and 304 to a client that has it). Generous enough for a browser
 * loading the dashboard's few files at once; `rate` 0 (TOCK_RATE_LIMIT=0) turns the limit off.
 * API answers are not compressed here: a 1000-job answer would spend the event loop's time on it.
 */
export function publicAnswers(options: { rate: number; burst: number }, now: () => number, onRefused: (ctx: Koa.Context, error: RateLimitError) => void): Koa.Middleware {
  const limiter = createRateLimiter(options.rate > 0 ? { rate: Math.max(options.rate, PUBLIC_RATE), burst: Math.max(options.burst, PUBLIC_BURST) } : { rate: 0, burst: 0 }, now);
  const cache = conditional();
  const tag = etag();
  const squeeze = compress({ threshold: 1024, br: { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }, gzip: { level: 6 }, deflate: false });
  return async (ctx, next) => {
    const wait = limiter.take(ctx.ip);
    if (wait) {
      onRefused(ctx, new RateLimitError(wait));
      return;
    }
    await squeeze(ctx, async () => void (await cache(ctx, async () => void (await tag(ctx, next)))));
  };
}

/** Requests per second and burst per address for answers without a token, at the least. */
const PUBLIC_RATE = 10;
const PUBLIC_BURST = 30;
