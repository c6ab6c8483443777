import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { RequestSpec } from './buildRequest.ts';
import { createEgressGuard, isEgressRefused, type EgressGuard, type EgressRefusedError } from '../../shared/egressGuard.ts';
import { describeError, isConnectFailure } from './httpFailures.ts';
import { OutputCapture } from './outputCapture.ts';
import { redirectTarget } from './redirect.ts';
import { createWarmConnections } from './warmConnections.ts';
import { sendOnce, type Hop } from './sendOnce.ts';

const CONNECTIONS_PER_ORIGIN = 1024;

/** One run's HTTP outcome. Every failure is a value here; call() never rejects. */
export interface HttpResult {
  httpStatus: number /* 0 when no response */;
  output: string /* first 4 KiB + last 4 KiB of the body, marker between if truncated */;
  downloaded: number /* total body bytes */;
  error: string /* '' when none */;
  ip: string /* remote address used */;
  startTime: number /* ms */;
  executionTime: number /* seconds, float */;
  connectFailed: boolean;
  /** The failure is of the kind that may pass (connect, reset, timeout), not a refusal or a bad URL. */
  transient: boolean;
  /** The final response's Retry-After header, when it had one. */
  retryAfter: string | null;
  /** The final response's headers (undefined when there was none). */
  headers?: Record<string, string | string[] | undefined>;
  /**
   * For the operator's log only: which address the egress policy refused and why. The run's
   * `error` and `ip` (shown to the tenant) say only that the target is not allowed.
   */
  refused?: { host: string; ip: string; reason: string } | null;
}

export interface HttpCallerOptions {
  allowNetworks: string[];
  maxRedirects?: number;
  connectRetryDelayMs?: number;
  connectTimeoutMs?: number;
  /** How long a connection opened ahead waits for its run before it is closed. */
  warmIdleMs?: number;
  /** Replaces dns.lookup, for tests only. */
  resolve?: Parameters<typeof createEgressGuard>[1];
  /** Certificate authorities trusted instead of the system's, for tests only (a target's private CA). */
  ca?: string[];
}

export interface HttpCaller {
  /** `once`: no second try after a failed connect (a test call answers at once instead). */
  call(spec: RequestSpec, options?: { once?: boolean }): Promise<HttpResult>;
  /** A call to `url` is coming at `due` (ms): connect ahead if needed. Call the result once it went, or will not. */
  expect(url: string, due: number): () => void;
  close(): Promise<void>;
}

export function createHttpCaller(options: HttpCallerOptions): HttpCaller {
  const guard: EgressGuard = createEgressGuard(options.allowNetworks, options.resolve);
  const maxRedirects = options.maxRedirects ?? 10;
  const retryDelayMs = options.connectRetryDelayMs ?? 3000;

  // Hostnames are checked by the guard's lookup; an IP literal skips lookup in net.connect, so
  // it is checked here. Both run per connection, which covers every redirect hop as well.
  const base = buildConnector({ lookup: guard.lookup, timeout: options.connectTimeoutMs ?? 10_000, ...(options.ca ? { ca: options.ca } : {}) });
  const connect: buildConnector.connector = (opts, callback) => {
    const host = opts.hostname.replace(/^\[(.*)\]$/, '$1');
    const refused = isIP(host) ? guard.refusal(host) : null;
    if (refused) return callback(refused, null);
    base(opts, callback);
  };
  // Enough sockets per origin that a burst of due runs to one host goes out at once instead of
  // queueing behind responses.
  const warm = createWarmConnections(connect, { maxPerOrigin: CONNECTIONS_PER_ORIGIN, maxIdleMs: options.warmIdleMs });
  const agent = new Agent({ connect: warm.connector, keepAliveTimeout: 10_000, connections: CONNECTIONS_PER_ORIGIN });
  let closed = false;
  const sleeping = new Set<() => void>();

  interface Chain {
    hop: Hop | null;
    error: string;
    spec: RequestSpec;
    redirects: number;
    retryable: boolean;
    transient: boolean;
    refused?: EgressRefusedError;
  }

  /** Sends `spec` and follows its redirects, all within one timeout. */
  async function follow(first: RequestSpec, redirectsSoFar: number): Promise<Chain> {
    const deadline = performance.now() + first.timeoutMs;
    let spec = first;
    let redirects = redirectsSoFar;
    let last: Hop | null = null;
    const fail = (error: string, retryable = false, transient = retryable): Chain => ({ hop: last, error, spec, redirects, retryable, transient });
    for (;;) {
      let url: URL;
      try {
        url = new URL(spec.url);
      } catch {
        return fail(`invalid URL ${JSON.stringify(spec.url)}`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(`unsupported URL scheme ${JSON.stringify(url.protocol)}`);
      const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
      const refused = isIP(literal) ? guard.refusal(literal) : null;
      if (refused) {
        last = { status: 0, location: null, capture: new OutputCapture(), ip: '', error: refused, connected: false, timedOut: false };
        return { ...fail(refused.message), refused };
      }
      if (closed) return fail('the executor is shutting down');

      const hop = await sendOnce(agent, spec, url, deadline - performance.now());
      last = hop;
      if (hop.timedOut) {
        const phase = !hop.connected ? ' while connecting' : hop.status === 0 ? ' waiting for the response' : ' while reading the body';
        return fail(`timed out after ${first.timeoutMs / 1000} s${phase}`, false, true);
      }
      if (hop.error) {
        if (isEgressRefused(hop.error)) {
          hop.ip = '';
          return { ...fail(hop.error.message), refused: hop.error };
        }
        if (!hop.ip) {
          const address = (hop.error as { address?: unknown }).address;
          hop.ip = typeof address === 'string' ? address : '';
        }
        if (closed) return fail('the executor is shutting down');
        return fail(describeError(hop.error, url.host), !hop.connected && isConnectFailure(hop.error), true);
      }
      if (hop.location === null) return fail('');
      if (redirects >= maxRedirects) return fail(`too many redirects (more than ${maxRedirects})`);
      const next = redirectTarget(spec, hop.status, hop.location);
      if (typeof next === 'string') return fail(next);
      spec = next;
      redirects++;
    }
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleeping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleeping.add(wake);
    });

  async function call(spec: RequestSpec, options: { once?: boolean } = {}): Promise<HttpResult> {
    const startTime = Date.now();
    const t0 = performance.now();
    let chain: Chain;
    try {
      chain = await follow(spec, 0);
      if (chain.retryable && !closed && !options.once) {
        await sleep(retryDelayMs);
        chain = await follow(chain.spec, chain.redirects);
      }
    } catch (e) {
      // Not expected; kept so a bug here still yields a failed run rather than a stuck one.
      chain = { hop: null, error: `internal error: ${(e as Error)?.message ?? String(e)}`, spec, redirects: 0, retryable: false, transient: false };
    }
    const hop = chain.hop;
    return {
      httpStatus: hop?.status ?? 0,
      output: hop ? hop.capture.text() : '',
      downloaded: hop?.capture.total ?? 0,
      error: chain.error,
      ip: hop?.ip ?? '',
      startTime,
      executionTime: (performance.now() - t0) / 1000,
      connectFailed: chain.retryable,
      transient: chain.transient,
      retryAfter: hop?.retryAfter ?? null,
      headers: hop?.headers,
      refused: chain.refused ? { host: chain.refused.host, ip: chain.refused.ip, reason: chain.refused.reason } : null,
    };
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    warm.close();
    for (const wake of [...sleeping]) wake();
    await agent.destroy().catch(() => undefined);
  }

  return { call, close, expect: warm.expect };
}
