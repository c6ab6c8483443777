import Router from '@koa/router';
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { AppError, isAppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { Readiness } from '../../shared/readiness.ts';
import { actionLinkRoutes } from './actionLinks.ts';
import { serveBadge } from './badgeCalendar.ts';
import { authenticate, bearerToken, extractToken } from './auth.ts';
import { parseBody, parseQuery, readBody } from './body.ts';
import { ExplainedError, FUNCTIONS, type Clients } from './functions.ts';
import { canonicalParam as canonical } from './inputs.ts';
import { dashboardMiddleware } from './dashboard/serve.ts';
import { apiRequestDuration } from '../../shared/metrics.ts';
import { openApiDocument } from './openapi.ts';
import { Params } from './params.ts';
import { publicAnswers } from './publicAnswers.ts';
import { createRateLimiter, RateLimitError } from './rateLimit.ts';
import { whyNotReady } from './whyNotReady.ts';

export interface GatewayOptions {
  clients: Clients;
  rateLimit: { rate: number; burst: number };
  /**
   * Proxies in front of the gateway whose X-Forwarded-For is trusted (0: none, the socket's
   * address is the client's). With N, the client is the N-th address from the right: the one the
   * outermost trusted proxy saw; anything a client wrote further left is ignored.
   */
  trustProxy?: number;
  log: Logger;
  now?: () => number;
  /** Embedded mode: the process's readiness (every service's conditions) also decides /readyz. */
  readiness?: Readiness;
  /** Serve the web dashboard at /dashboard/ (and redirect / there); TOCK_DASHBOARD=off turns it off. */
  dashboard?: boolean;
}

const envelopeError = (error: AppError) => ({ status: 'error', code: error.code, message: error.message });

/**
 * The HTTP edge: /api/v1/{function} with FastCron's envelope, plus /healthz, /readyz and the
 * dashboard's static files. /metrics is not here: it is served on the operations port only
 * (startGatewayService), away from the public.
 * It owns no state but rate-limit buckets; every function is a gRPC call to the services.
 */
export function createGateway(options: GatewayOptions): Koa {
  const { clients, log } = options;
  const now = options.now ?? Date.now;
  const tokenLimiter = createRateLimiter(options.rateLimit, now);
  const addressLimiter = createRateLimiter(options.rateLimit, now);
  const hops = options.trustProxy ?? 0;
  const app = new Koa({ proxy: hops > 0, proxyIpHeader: 'X-Forwarded-For', maxIpsCount: hops });
  const router = new Router();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const reason = await whyNotReady(clients, options.readiness);
    if (reason === undefined) ctx.body = { status: 'ready' };
    else {
      ctx.status = 503;
      ctx.body = { status: 'not ready', reason };
    }
  });
  const open = publicAnswers(options.rateLimit, now, (ctx, error) => {
    ctx.status = error.httpStatus;
    ctx.set('Retry-After', String(error.retryAfter));
    ctx.body = envelopeError(error);
  });
  // Notifications' action links: pages for a person, limited per address like every open answer.
  actionLinkRoutes(router, clients, open, log);
  const openApi = JSON.stringify(openApiDocument());
  router.get('/api/v1/openapi.json', open, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApi;
  });

  // A job's status badge (cron_badge): public like the OpenAPI document, rate limited per address.
  router.get('/badge/:file', open, serveBadge(clients, now));

  router.all('/api/v1/:fn', async (ctx) => {
    const started = performance.now();
    const name = String(ctx.params.fn);
    const requestId = requestIdOf(ctx.get('x-request-id'));
    ctx.set('X-Request-Id', requestId);
    let code = 0;
    let accountId: string | undefined;
    try {
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) {
        throw new AppError('UNKNOWN_FUNCTION', `method ${ctx.method} is not supported; use GET or POST`);
      }
      const fn = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
      if (!fn) throw new AppError('UNKNOWN_FUNCTION', `unknown function "${name}"; see /api/v1/{function} in the API documentation`);
      // The rate limit is settled before the body is read: a client over its limit costs no
      // parsing. A token in the header is checked (and counted) first; without one, a client
      // address whose bad guesses spent its bucket is turned away before its body is read.
      const bearer = bearerToken(ctx.get('authorization'));
      let caller = bearer === undefined ? undefined : await authenticate(clients.jobs, bearer, ctx.ip, addressLimiter, tokenLimiter);
      if (!caller) {
        const wait = addressLimiter.wait(ctx.ip);
        if (wait) throw new RateLimitError(wait);
      }
      const body = ctx.method === 'GET' ? { fields: {}, json: null } : parseBody(await readBody(ctx.req), ctx.get('content-type') || undefined);
      const params = new Params([parseQuery(ctx.querystring), body.fields], canonical);
      caller ??= await authenticate(clients.jobs, extractToken('', params), ctx.ip, addressLimiter, tokenLimiter);
      const { account, limitKey, tokenHash } = caller;
      accountId = String(account.id);
      // The token's budget after this call, so a client (the dashboard) can pace itself and never
      // be refused: IETF draft RateLimit fields, seconds.
      const budget = tokenLimiter.state(limitKey);
      if (options.rateLimit.rate > 0) ctx.set({ 'RateLimit-Limit': String(options.rateLimit.burst), 'RateLimit-Remaining': String(budget.remaining), 'RateLimit-Reset': String(budget.reset) });
      ctx.body = { status: 'success', code: 0, data: await fn({ params, accountId: account.id, tokenHash, json: body.json, canonical, idempotencyKey: ctx.get('x-idempotency-key') || undefined, origin: `${ctx.protocol}://${ctx.host}` }, clients) };
    } catch (error) {
      const appError = forClient(error, requestId, name, log);
      code = appError.code;
      ctx.status = appError.httpStatus;
      const retryAfter = appError instanceof RateLimitError ? appError.retryAfter : appError.kind === 'UNAVAILABLE' ? UNAVAILABLE_RETRY_S : 0;
      if (retryAfter > 0) ctx.set('Retry-After', String(retryAfter));
      ctx.body = envelopeError(appError);
    }
    // The label must come from our table, never from the request: a path is not a metric name.
    const fn = Object.hasOwn(FUNCTIONS, name) ? name : 'unknown';
    const seconds = (performance.now() - started) / 1000;
    apiRequestDuration.observe({ function: fn, code }, seconds);
    // The access log: never the query or body (tokens and passwords travel there).
    log.info('api request', { requestId, method: ctx.method, function: fn, code, status: ctx.status, ms: Math.round(seconds * 1e4) / 10, ip: ctx.ip, accountId });
  });

  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      // Anything that escaped the route (e.g. a socket error) still gets an envelope, never a crash.
      const appError = forClient(error, randomUUID(), ctx.path, log);
      ctx.status = appError.httpStatus;
      ctx.body = envelopeError(appError);
    }
  });
  if (options.dashboard) {
    const dashboard = dashboardMiddleware();
    app.use(async (ctx, next) => {
      if (ctx.path === '/' || ctx.path === '/favicon.ico' || ctx.path.startsWith('/dashboard')) await open(ctx, async () => void (await dashboard(ctx, next)));
      else await next();
    });
  }
  app.use(router.routes());
  app.use(async (ctx) => {
    if (ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = envelopeError(new AppError('UNKNOWN_FUNCTION', `no such endpoint ${ctx.path}; the API lives under /api/v1/{function}`));
    }
  });
  app.on('error', (error) => log.warn('http error', { error }));
  return app;
}

/** The caller's request id when it is a sane token (so it can be followed across systems), else a new one. */
function requestIdOf(sent: string) {
  return sent && sent.length <= 128 && /^[A-Za-z0-9._:/+=-]+$/.test(sent) ? sent : randomUUID();
}

/** Seconds a client is told to wait (Retry-After) when a store or service is busy or unreachable. */
const UNAVAILABLE_RETRY_S = 1;

/**
 * What the client sees of a failure. 4xx errors are ours, written for the client. A 5xx answer
 * never shows internals (a store's or a peer's message): it gets a plain sentence and a request id
 * that is in the log with the real cause. Our own rate limit keeps its message and Retry-After.
 */
function forClient(error: unknown, requestId: string, where: string, log: Logger): AppError {
  if (error instanceof RateLimitError) return error;
  if (isAppError(error) && error.httpStatus < 500) return error;
  log.error('request failed', { requestId, where, error });
  if (error instanceof ExplainedError) return new ExplainedError(error.kind, `${error.message} (request id ${requestId})`);
  const kind = isAppError(error) ? error.kind : 'INTERNAL';
  // A busy or unreachable store or service (another process holds the lock too long, a peer is
  // restarting) is worth a retry, as 503 and Retry-After say.
  if (kind === 'UNAVAILABLE') {
    return new AppError('UNAVAILABLE', `the service is busy or unavailable right now; retry in ${UNAVAILABLE_RETRY_S} second (request id ${requestId})`);
  }
  // A peer's own rate limit, relayed over gRPC.
  if (kind === 'RATE_LIMITED') return new RateLimitError(1, `rate limit exceeded; retry in 1 second (request id ${requestId})`);
  if (kind === 'CONFLICT') return new AppError('CONFLICT', `the object is being changed by other requests right now; try again (request id ${requestId})`);
  return new AppError('INTERNAL', `internal error (request id ${requestId})`);
}
