import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../shared/log.ts';
import { createReadiness, type Readiness } from '../../shared/readiness.ts';
import type { ServiceHandle } from '../../shared/service.ts';
import { startOpsServer, type OpsServerOptions } from '../../shared/opsServer.ts';
import { createGateway } from './app.ts';
import type { Clients } from './functions.ts';
import { sharedReads } from './sharedReads.ts';
import { whyNotReady } from './whyNotReady.ts';

export interface GatewayOptions {
  clients: Clients;
  rateLimit: { rate: number; burst: number };
  trustProxy?: number;
  log: Logger;
  host: string;
  port: number;
  readiness?: Readiness;
  dashboard?: boolean;
  /** The operations port: where /metrics is served (with /healthz and /readyz). */
  ops?: { host: string; port: number; metrics: NonNullable<OpsServerOptions['metrics']> };
}

/**
 * Serves the gateway (the HTTP API, the dashboard, /healthz, /readyz) on host:port (0: any free
 * port) and, when `ops` is given, the process's operations port (/healthz, /readyz, /metrics):
 * the metrics show every account's counters together, so they are never on the public port. It
 * holds no state of its own: its readiness is that of the process it runs in (embedded: every
 * service's conditions).
 */
export async function startGatewayService(options: GatewayOptions): Promise<ServiceHandle<object, 'http'> & { readonly addresses: { readonly ops?: string } }> {
  const { rateLimit, trustProxy, log, dashboard } = options;
  const clients = sharedReads(options.clients);
  const readiness = options.readiness ?? createReadiness(log);
  const app = createGateway({ clients, rateLimit, trustProxy, log, readiness, dashboard });
  const handle = app.callback();
  // Koa's handler settles every request itself (errors go to app.onerror): nothing to await here.
  const server: Server = createServer((req, res) => void handle(req, res));
  server.on('clientError', answerClientError);
  // Keep-alive sockets outliving the client's idle timeout cause spurious resets; stay above common defaults.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = `${options.host}:${(server.address() as AddressInfo).port}`;
  const ops = options.ops && (await startOps(options.ops, () => whyNotReady(clients, readiness), log, server));
  options.log.info('gateway listening', { url: `http://${address}` });
  return {
    addresses: { http: address, ...(ops ? { ops: ops.address } : {}) },
    readiness,
    async stop() {
      await ops?.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The operations port, its /readyz the public one's; the public server is closed if it cannot listen. */
async function startOps(ops: NonNullable<GatewayOptions['ops']>, notReady: () => Promise<string | undefined>, log: Logger, server: Server) {
  try {
    const { port, stop } = await startOpsServer({ ...ops, ready: async () => (await notReady()) === undefined, log });
    return { address: `${ops.host}:${port}`, stop };
  } catch (error) {
    server.close();
    throw error;
  }
}

/**
 * A request Node cannot parse (a URL or headers over its 16 KiB limit, broken HTTP) never reaches
 * Koa; it still gets the API's envelope (code 13) instead of Node's bare status line.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex) {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify({
    status: 'error',
    code: 13,
    message: tooLarge ? 'request line and headers: too large; send long parameters in a POST body' : 'request: malformed HTTP',
  });
  socket.end(
    `HTTP/1.1 ${tooLarge ? '413 Payload Too Large' : '400 Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
