/** A tiny API client for tests: real HTTP against a running gateway. */
export interface Envelope<T = any> {
  status: 'success' | 'error';
  code: number;
  data?: T;
  message?: string;
}

export interface RawInit {
  method?: string;
  /** Appended to the URL as given (already encoded), without the leading '?'. */
  query?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface RawResponse {
  http: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

/** One request exactly as given: method, query string, headers and body, nothing added. */
export async function rawRequest(baseUrl: string, path: string, init: RawInit = {}): Promise<RawResponse> {
  const url = `${baseUrl}${path}${init.query !== undefined ? `?${init.query}` : ''}`;
  const body = typeof init.body === 'string' || init.body === undefined ? init.body : new Uint8Array(init.body);
  const response = await fetch(url, { method: init.method ?? 'POST', headers: init.headers, body });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { http: response.status, headers: response.headers, text, json };
}

export function apiClient(baseUrl: string, token: string) {
  const call = async <T = any>(fn: string, params: Record<string, unknown> = {}, init: { method?: string; as?: 'json' | 'form' | 'query'; headers?: Record<string, string> } = {}) => {
    const method = init.method ?? 'POST';
    const as = init.as ?? (method === 'GET' ? 'query' : 'json');
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...init.headers };
    let url = `${baseUrl}/api/v1/${fn}`;
    let body: string | undefined;
    if (as === 'query') url += `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`;
    else if (as === 'form') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
    } else {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(params);
    }
    const response = await fetch(url, { method, headers, body });
    return { http: response.status, headers: response.headers, ...((await response.json()) as Envelope<T>) };
  };
  /** A request to /api/v1/{fn} built by hand (no token added): for encodings and token placements. */
  const raw = (fn: string, init: RawInit = {}) => rawRequest(baseUrl, `/api/v1/${fn}`, init);
  return { call, raw, token, baseUrl };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** The data of a successful call; throws with the envelope otherwise (for setup steps). */
export async function ok<T = any>(promise: Promise<Envelope<any> & { http: number }>): Promise<T> {
  const result = await promise;
  if (result.status !== 'success') throw new Error(`expected success, got ${result.http} ${JSON.stringify(result)}`);
  return result.data as T;
}

/** Asserts an error envelope with this code (and the HTTP status docs/api.md (Responses) gives it); returns the message. */
export async function fails(promise: Promise<Envelope & { http: number }>, code: number, http?: number): Promise<string> {
  const result = await promise;
  const shown = JSON.stringify(result);
  if (result.status !== 'error' || result.code !== code) throw new Error(`expected error code ${code}, got ${result.http} ${shown}`);
  const expectedHttp = http ?? HTTP_OF_CODE[code];
  if (expectedHttp !== undefined && result.http !== expectedHttp) throw new Error(`expected HTTP ${expectedHttp} for code ${code}, got ${result.http} ${shown}`);
  if ('data' in result) throw new Error(`an error envelope carries no data: ${shown}`);
  if (typeof result.message !== 'string' || !result.message) throw new Error(`an error envelope carries a message: ${shown}`);
  return result.message;
}

/** docs/api.md (Responses): the HTTP status of each error code (13 is 400 or 413, checked by the caller). */
export const HTTP_OF_CODE: Record<number, number> = { 1: 500, 2: 404, 3: 400, 4: 400, 5: 404, 6: 409, 7: 400, 11: 401, 12: 503 };
