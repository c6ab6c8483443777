import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { SIGNATURE_HEADER, signJobCall } from '../../shared/signing.ts';
import type { RequestSpec } from './buildRequest.ts';
import { OutputCapture } from './outputCapture.ts';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// A redirect's own body is never shown; past this much it is not worth reading to the end.
const MAX_REDIRECT_BODY = 64 * 1024;

/**
 * Undici does not say which socket served a request. It does announce, synchronously right after
 * a handler's onRequestStart, the socket the headers go out on; this slot carries that across.
 */
let headersSlot: { ip: string } | null = null;
let subscribed = false;
function watchSockets(): void {
  if (subscribed) return;
  subscribed = true;
  diagnostics.subscribe('undici:client:sendHeaders', (message) => {
    if (!headersSlot) return;
    headersSlot.ip = (message as { socket?: Socket }).socket?.remoteAddress ?? '';
    headersSlot = null;
  });
}

/** What one exchange gave: the answer so far, or why there is none. */
export interface Hop {
  status: number;
  location: string | null;
  capture: OutputCapture;
  ip: string;
  error: unknown;
  /** onRequestStart ran: a socket was up, so a failure is not a connect failure. */
  connected: boolean;
  timedOut: boolean;
  retryAfter?: string | null;
  /** The response's headers as undici gives them (a test call shows them; a run keeps none). */
  headers?: Record<string, string | string[] | undefined>;
}

/**
 * One HTTP exchange, no redirect followed: sends `spec` to `url` (the hop's URL, which may differ
 * from spec.url after a redirect), signed at the moment it goes out, and reads the answer within
 * `remainingMs`. Every failure is in the Hop; it never rejects.
 */
export function sendOnce(agent: Dispatcher, spec: RequestSpec, url: URL, remainingMs: number): Promise<Hop> {
  watchSockets();
  const remaining = Math.max(1, Math.ceil(remainingMs));
  return new Promise((resolve) => {
    const slot = { ip: '' };
    const capture = new OutputCapture();
    let status = 0;
    let location: string | null = null;
    let retryAfter: string | null = null;
    let responseHeaders: Hop['headers'];
    let connected = false;
    let settled = false;
    let controller: Dispatcher.DispatchController | null = null;
    const finish = (error: unknown, timedOut = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (headersSlot === slot) headersSlot = null;
      resolve({ status, location, capture, ip: slot.ip, error, connected, timedOut, retryAfter, headers: responseHeaders });
    };
    const timer = setTimeout(() => {
      finish(null, true); // first: abort() reports back synchronously through onResponseError
      controller?.abort(new Error('timeout'));
    }, remaining);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        connected = true;
        // Our deadline fired while undici was still connecting: drop the request now.
        if (settled) return c.abort(new Error('timeout'));
        headersSlot = slot;
      },
      onResponseStart(_c, statusCode, headers) {
        if (statusCode < 200) return;
        status = statusCode;
        responseHeaders = headers;
        const loc = headers.location;
        location = REDIRECT_STATUSES.has(statusCode) ? (Array.isArray(loc) ? loc[0] : loc) ?? null : null;
        const after = headers['retry-after'];
        retryAfter = (Array.isArray(after) ? after[0] : after) ?? null;
      },
      onResponseData(c, chunk) {
        capture.push(chunk);
        if (location !== null && capture.total > MAX_REDIRECT_BODY) {
          finish(null); // first, as abort() reports back synchronously as an error
          c.abort(new Error('redirect body not read to the end'));
        }
      },
      onResponseEnd() {
        finish(null);
      },
      onResponseError(_c, error) {
        finish(error);
      },
    };
    try {
      const path = `${url.pathname}${url.search}`;
      const slack = remaining + 1000; // our timer decides; undici's only bounds the socket
      // Signed now, over exactly what goes out: the URL without credentials or fragment.
      const signature = spec.signing?.length ? signJobCall(spec.signing, { method: spec.method, url: `${url.origin}${path}`, body: spec.body }, Date.now()) : null;
      const headers = signature ? { ...spec.headers, [SIGNATURE_HEADER]: signature } : spec.headers;
      agent.dispatch(
        { origin: url.origin, path, method: spec.method, headers, body: spec.body, headersTimeout: slack, bodyTimeout: slack },
        handler,
      );
    } catch (e) {
      finish(e);
    }
  });
}
