/**
 * The dashboard's only way to Tock: the public /api/v1 functions, on the page's own origin, with
 * the token as a Bearer header (no cookie, so no CSRF). The token is never logged or shown.
 */

/** An error envelope from the API (code and message as documented in docs/api.md), or 0 when Tock could not be reached. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly http = 0,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Params = Record<string, string | number | boolean>;
export type Call = <T>(fn: string, params?: Params) => Promise<T>;

/** Error 12: over the token's rate limit (HTTP 503 with Retry-After). */
const RATE_LIMITED = 12;
/** A call refused for the rate anyway (another tab, another client of the token) waits its turn, up to this many times. */
const RATE_RETRIES = 3;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The page's calls go one at a time, paced by the budget the API states after each one
 * (RateLimit-Remaining and RateLimit-Reset, docs/api.md): when none is left, the next call waits
 * until one is. So with the default limit (1 a second) no call of the page's is refused, which a
 * browser would report on the console, and an action waits its turn instead of failing. One queue
 * for the page, whatever view or sign-in form makes the call.
 */
let queue: Promise<unknown> = Promise.resolve();
/** Not before this instant (ms, performance.now()): the budget is spent until then. */
let notBefore = 0;

function paced<T>(send: () => Promise<T>): Promise<T> {
  const run = queue.then(async () => {
    const delay = notBefore - performance.now();
    if (delay > 0) await wait(delay);
    return send();
  });
  queue = run.catch(() => undefined);
  return run;
}

/** Reads the budget an answer states; the next call waits when none is left. */
function noteBudget(response: Response) {
  const remaining = response.headers.get('ratelimit-remaining');
  const reset = Number(response.headers.get('ratelimit-reset'));
  if (remaining === '0' && reset > 0) notBefore = performance.now() + reset * 1000;
  const retryAfter = Number(response.headers.get('retry-after'));
  if (retryAfter > 0) notBefore = Math.max(notBefore, performance.now() + Math.min(retryAfter, 5) * 1000);
}

/** `token`: the token itself, or where to read it at each send (a rotation replaces it while calls wait their turn). */
export function createApi(token: string | (() => string), fetchImpl: typeof fetch = (...args) => fetch(...args)): Call {
  return async function call<T>(fn: string, params: Params = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const { response, envelope } = await paced(async () => {
        let response: Response;
        try {
          response = await fetchImpl(`/api/v1/${encodeURIComponent(fn)}`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${typeof token === 'function' ? token() : token}`, 'Content-Type': 'application/json' },
            body: JSON.stringify(params),
            cache: 'no-store',
          });
        } catch (error) {
          throw new ApiError(0, `cannot reach Tock (${error instanceof Error ? error.message : 'network error'})`);
        }
        noteBudget(response);
        const envelope = (await response.json().catch(() => null)) as { status?: string; code?: number; message?: string; data?: T } | null;
        return { response, envelope };
      });
      if (envelope?.status === 'success') return envelope.data as T;
      const code = envelope?.code ?? 1;
      // The wait is already set from Retry-After: the retry queues behind it.
      if (code === RATE_LIMITED && attempt < RATE_RETRIES) continue;
      throw new ApiError(code, envelope?.message ?? `HTTP ${response.status} without an API answer`, response.status);
    }
  };
}

/** The session's token: in sessionStorage only (gone when the tab closes), never in a cookie. */
const TOKEN_KEY = 'tock.token';
export const tokenStore = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};
