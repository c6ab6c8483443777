import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './log.ts';

export interface OpsServerOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** /readyz answers 200 while this is true, 503 otherwise. */
  ready: () => boolean | Promise<boolean>;
  /** /metrics; 404 when absent. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  log?: Logger;
}

/**
 * The operations port of a service without an HTTP API of its own (executor, notifier):
 * GET /healthz (200 while the process lives), /readyz (200 or 503), /metrics. Kubernetes probes
 * and Prometheus scrape it; it serves nothing else.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<{ port: number; stop(): Promise<void> }> {
  const { log } = options;
  const server = createServer((req, res) => {
    const answer = (status: number, body: string, contentType = 'application/json; charset=utf-8') => {
      res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, JSON.stringify({ status: 'error', message: 'only GET' }));
    const handle = async () => {
      if (path === '/healthz') return answer(200, JSON.stringify({ status: 'ok' }));
      if (path === '/readyz') {
        const ready = await options.ready();
        return answer(ready ? 200 : 503, JSON.stringify({ status: ready ? 'ready' : 'not ready' }));
      }
      if (path === '/metrics' && options.metrics) {
        const { contentType, body } = await options.metrics();
        return answer(200, body, contentType);
      }
      answer(404, JSON.stringify({ status: 'error', message: `no such endpoint ${path}; try /healthz, /readyz or /metrics` }));
    };
    handle().catch((error) => {
      log?.warn('ops endpoint failed', { path, error });
      // A readiness check that throws means not ready; anything else is a server error.
      if (!res.headersSent) answer(path === '/readyz' ? 503 : 500, JSON.stringify({ status: 'error' }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  log?.info('ops endpoints listening', { url: `http://${options.host}:${port}`, paths: ['/healthz', '/readyz', ...(options.metrics ? ['/metrics'] : [])] });
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
