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
/** A page's few calls may meet a low TOCK_RATE_LIMIT: they wait their turn instead of failing, up to this many times. */
const RATE_RETRIES = 3;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createApi(token: string, fetchImpl: typeof fetch = (...args) => fetch(...args)): Call {
  return async function call<T>(fn: string, params: Params = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetchImpl(`/api/v1/${encodeURIComponent(fn)}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(params),
          cache: 'no-store',
        });
      } catch (error) {
        throw new ApiError(0, `cannot reach Tock (${error instanceof Error ? error.message : 'network error'})`);
      }
      const envelope = (await response.json().catch(() => null)) as { status?: string; code?: number; message?: string; data?: T } | null;
      if (envelope?.status === 'success') return envelope.data as T;
      const code = envelope?.code ?? 1;
      if (code === RATE_LIMITED && attempt < RATE_RETRIES) {
        const seconds = Number(response.headers.get('retry-after')) || 1;
        await wait(Math.min(seconds, 5) * 1000);
        continue;
      }
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
