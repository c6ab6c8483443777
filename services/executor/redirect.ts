import type { RequestSpec } from './buildRequest.ts';

/**
 * The next request after a redirect, with the method rules of RFC 9110 as fetch applies them: 303
 * becomes GET (HEAD stays HEAD), 301/302 turn a POST into a GET, 307/308 repeat as they are.
 *
 * A job's secrets go only where the job points. To another origin (scheme, host or port differ)
 * only Tock's own headers follow: none the job set (its header lines, Basic auth, User-Agent), no
 * userinfo, no body. A 307/308 there that would have to repeat a body is not followed: it asks for
 * the same request, and a POST without its body would be another request the job never made. A
 * redirect from https to plain http is never followed. Returns an error sentence (the run's error,
 * shown in its log entry) when the redirect is not followed.
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
  const from = new URL(spec.url);
  // A relative Location inherits the base's userinfo; credentials never travel in a hop's URL.
  next.username = '';
  next.password = '';
  next.hash = '';
  if (from.protocol === 'https:' && next.protocol === 'http:') {
    return `redirect (HTTP ${status}) from https to plain http (${next.origin}) refused: it would send the request unencrypted`;
  }
  const toGet = (status === 303 && spec.method !== 'HEAD') || ((status === 301 || status === 302) && spec.method === 'POST');
  const body = toGet ? null : spec.body;
  const crossOrigin = from.origin !== next.origin;
  if (crossOrigin && body !== null && body !== '') {
    return `redirect (HTTP ${status}) to another origin (${next.origin}) not followed: it would resend the request body there`;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(crossOrigin ? (spec.anyOriginHeaders ?? {}) : spec.headers)) {
    if (toGet && name.toLowerCase() === 'content-type') continue;
    headers[name] = value;
  }
  // Every hop is signed afresh over its own method, URL and body (by the sender), so a signature
  // seen by a redirect's target is good for that target only.
  return {
    method: toGet ? 'GET' : spec.method,
    url: next.href,
    headers,
    anyOriginHeaders: spec.anyOriginHeaders,
    body,
    timeoutMs: spec.timeoutMs,
    signing: spec.signing,
  };
}
