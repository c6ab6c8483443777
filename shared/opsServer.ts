import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './log.ts';

export interface OpsServerOptions {
  host: string;
  port: number;
  /** Readiness: false (or a throw) answers 503. */
  ready: () => boolean | Promise<boolean>;
  /** The Prometheus exposition; absent: /metrics answers 404. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  log?: Logger;
}

/**
 * A service's operations port (distributed mode): GET /healthz (200 while the process lives),
 * /readyz (200 or 503 per `ready`), /metrics. Kept apart from the service's own port so probes
 * and scrapes never queue behind its traffic, and so it can stay off the public network.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<{ port: number; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    void answer(req, res, options).catch((error) => {
      options.log?.warn('ops request failed', { path: req.url, error });
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.log?.info('ops server listening', { url: `http://${options.host}:${port}`, paths: ['/healthz', '/readyz', ...(options.metrics ? ['/metrics'] : [])] });
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, options: OpsServerOptions) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'method not allowed\n');
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') return send(res, 200, 'application/json', '{"status":"ok"}');
  if (path === '/readyz') {
    const ready = await Promise.resolve()
      .then(options.ready)
      .catch(() => false);
    return ready ? send(res, 200, 'application/json', '{"status":"ready"}') : send(res, 503, 'application/json', '{"status":"not ready"}');
  }
  if (path === '/metrics' && options.metrics) {
    const { contentType, body } = await options.metrics();
    return send(res, 200, contentType, body);
  }
  send(res, 404, 'text/plain', 'not found\n');
}

function send(res: ServerResponse, status: number, contentType: string, body: string) {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
