import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../shared/log.ts';
import { createGateway } from './app.ts';
import type { Clients } from './functions.ts';

/** Serves the gateway on host:port (0: any free port). */
export async function startGatewayServer(options: { clients: Clients; rateLimit: { rate: number; burst: number }; log: Logger; host: string; port: number }) {
  const app = createGateway({ clients: options.clients, rateLimit: options.rateLimit, log: options.log });
  const server: Server = createServer(app.callback());
  // Keep-alive sockets outliving the client's idle timeout cause spurious resets; stay above common defaults.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.log.info('gateway listening', { url: `http://${options.host}:${port}` });
  return {
    port,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
