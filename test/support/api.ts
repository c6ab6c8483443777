/** A tiny API client for tests: real HTTP against a running gateway. */
export interface Envelope<T = any> {
  status: 'success' | 'error';
  code: number;
  data?: T;
  message?: string;
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
  return { call };
}

/** The data of a successful call; throws with the envelope otherwise (for setup steps). */
export async function ok<T = any>(promise: Promise<Envelope<T> & { http: number }>): Promise<T> {
  const result = await promise;
  if (result.status !== 'success') throw new Error(`expected success, got ${result.http} ${JSON.stringify(result)}`);
  return result.data as T;
}
