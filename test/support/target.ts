import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../shared/clock.ts';

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** When it arrived, on the target's clock (the test's fake clock when it was given one). */
  at: number;
}

/** The answer to one request; `until` holds it back until the promise settles (a call kept in flight). */
export interface Answer {
  status?: number;
  body?: string;
  delayMs?: number;
  until?: Promise<unknown>;
  headers?: Record<string, string>;
}

/**
 * A real HTTP target on loopback that records every request; `respond` decides the answer. With
 * `tls` (a key and certificate in PEM, e.g. from test/support/certs.ts) it serves https; with
 * `clock` it stamps arrivals on that clock, so a test on a fake clock reads them as the system does.
 */
export async function startTarget(respond: (req: Received) => Answer = () => ({}), options: { tls?: { key: string | Buffer; cert: string | Buffer }; clock?: Clock } = {}) {
  const clock = options.clock ?? systemClock;
  const received: Received[] = [];
  const server: Server = options.tls ? createTlsServer(options.tls, (req, res) => void reply(req, res)) : createServer((req, res) => void reply(req, res));
  // Hoisted below: a test target that fails to answer shows up as the test's own timeout.
  async function reply(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk);
    const entry = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString(), at: clock.now() };
    received.push(entry);
    const answer = respond(entry);
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    if (answer.until) await answer.until.catch(() => undefined);
    if (res.destroyed) return;
    res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
    res.end(answer.body ?? 'ok');
  }
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
