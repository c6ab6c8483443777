import { UsageError, type Parsed } from './args.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** An error envelope of the API: its code and its message, shown as the API wrote it. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly http: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Api = <T = unknown>(fn: string, params?: Record<string, string>) => Promise<T>;

/** Tock's public API for an owner's token: `--url`/`--token`, else TOCK_URL/TOCK_TOKEN. */
export function apiFrom(parsed: Parsed, env: NodeJS.ProcessEnv, usage: string): Api {
  const url = (parsed.values.url as string | undefined) ?? env.TOCK_URL ?? DEFAULT_URL;
  const token = (parsed.values.token as string | undefined) ?? env.TOCK_TOKEN;
  if (!token) throw new UsageError('an API token is required: set TOCK_TOKEN (or pass --token)', usage);
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new UsageError(`--url / TOCK_URL must be an http(s) URL such as ${DEFAULT_URL}, got '${url}'`, usage);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError(`--url / TOCK_URL must be http or https, got '${url}'`, usage);
  return createApi(base.href.replace(/\/+$/, '').replace(/\/api\/v1$/, ''), token);
}

/** One API function per call, parameters form-encoded (the API reads every value as text). */
export function createApi(baseUrl: string, token: string): Api {
  return async <T>(fn: string, params: Record<string, string> = {}) => {
    let response: Response;
    try {
      response = await fetch(`${baseUrl}/api/v1/${fn}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new Error(`cannot reach Tock at ${baseUrl}: ${cause}`);
    }
    const text = await response.text();
    let envelope: { status?: string; code?: number; message?: string; data?: T };
    try {
      envelope = JSON.parse(text) as typeof envelope;
    } catch {
      throw new Error(`${baseUrl} did not answer as Tock's API does (HTTP ${response.status}, not JSON)`);
    }
    if (envelope.status !== 'success') throw new ApiError(envelope.code ?? 1, envelope.message ?? `HTTP ${response.status}`, response.status);
    return envelope.data as T;
  };
}
