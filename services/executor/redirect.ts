import type { RequestSpec } from './buildRequest.ts';

const CROSS_ORIGIN_DROPPED = new Set(['authorization', 'cookie', 'host']);

/**
 * The next request after a redirect, per RFC 9110 as browsers apply it: 303 becomes GET (HEAD
 * stays HEAD), 301/302 turn a POST into a GET, 307/308 repeat as they are. Credentials do not
 * follow to another origin. Returns an error sentence when the Location is unusable.
 */
export function redirectTarget(spec: RequestSpec, status: number, location: string): RequestSpec | string {
  let next: URL;
  try {
    next = new URL(location, spec.url);
  } catch {
    return `redirect (HTTP ${status}) to an invalid location ${JSON.stringify(location)}`;
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    return `redirect (HTTP ${status}) to an unsupported URL scheme ${JSON.stringify(next.protocol)}`;
  }
  const toGet = (status === 303 && spec.method !== 'HEAD') || ((status === 301 || status === 302) && spec.method === 'POST');
  const crossOrigin = new URL(spec.url).origin !== next.origin;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers)) {
    const lower = name.toLowerCase();
    if (crossOrigin && CROSS_ORIGIN_DROPPED.has(lower)) continue;
    if (toGet && lower === 'content-type') continue;
    headers[name] = value;
  }
  next.hash = '';
  // Every hop is signed afresh over its own method, URL and body (by the sender), so a signature
  // seen by a redirect's target is good for that target only.
  return { method: toGet ? 'GET' : spec.method, url: next.href, headers, body: toGet ? null : spec.body, timeoutMs: spec.timeoutMs, signing: spec.signing };
}
