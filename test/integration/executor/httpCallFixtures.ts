import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestSpec, RunJob } from '../../../services/executor/buildRequest.ts';
import { createHttpCaller, type HttpCaller } from '../../../services/executor/httpCall.ts';

/** What the httpCall suites share: a recording server, request and job fixtures, and a caller per test. */

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  port: number;
  base: string;
  seen: Seen[];
  connections: number;
  close(): Promise<void>;
}

/** A real server on 127.0.0.1:0 (by default) that records every request it receives. */
export async function startServer(
  handle: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void,
  port = 0,
  host = '127.0.0.1',
): Promise<TestServer> {
  const state: TestServer = { port: 0, base: '', seen: [], connections: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      state.seen.push(seen);
      handle(req, res, seen);
    });
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  state.port = (server.address() as AddressInfo).port;
  state.base = `http://${host}:${state.port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

export const echo = (_req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ ok: true, method: seen.method }));
};

export const spec = (url: string, over: Partial<RequestSpec> = {}): RequestSpec => ({ method: 'GET', url, headers: {}, body: null, timeoutMs: 5000, ...over });

export function job(over: Partial<RunJob>): RunJob {
  return { id: 7, url: '', httpMethod: 'GET', postData: '', httpHeaders: '', username: '', password: '', userAgent: '', timeout: 5, instances: 0, keyword: '', pattern: '', retries: 0, retryBackoff: 10, ...over };
}

/**
 * Registers hooks that give each test a fresh caller allowed to reach loopback, and close it and
 * every server `serve` started (or the test pushed on `cleanup`) after it.
 */
export function loopbackCaller() {
  const cleanup: Array<() => Promise<void>> = [];
  const t = {
    caller: undefined as unknown as HttpCaller,
    cleanup,
    serve: async (handle: Parameters<typeof startServer>[0]) => {
      const s = await startServer(handle);
      cleanup.push(s.close);
      return s;
    },
  };
  beforeEach(() => {
    t.caller = createHttpCaller({ allowNetworks: ['127.0.0.0/8'], connectRetryDelayMs: 20 });
  });
  afterEach(async () => {
    await t.caller.close();
    while (cleanup.length) await cleanup.pop()!();
  });
  return t;
}
