import { inspect } from 'node:util';
import { connect, type NatsConnection, type Status } from '@nats-io/transport-node';
import type { NatsAuth } from './natsAuth.ts';
import type { Logger } from '../log.ts';

/**
 * Client reconnect settings shared by every NATS connection of Tock: try forever, a second apart
 * (with jitter). nats.js otherwise gives up for good after a second authorization error over the
 * connection's life (an "Authentication Timeout" from a loaded server counts as one), and a
 * service would stay up with a dead connection.
 */
export const RECONNECT = { maxReconnectAttempts: -1, reconnectTimeWait: 1000, reconnectJitter: 500, ignoreAuthErrorAbort: true } as const;

export interface LastingConnectionOptions {
  url: string;
  name?: string;
  auth?: NatsAuth;
  log: Logger;
  /** Every status event of the connection in use (after it was logged). */
  onStatus?: (status: Status) => void | Promise<void>;
  /** nats.js closed the connection anyway: it is down until onReplaced. */
  onLost?: (reason: string) => void;
  /** A new connection replaces the closed one: make again what lived on the old one. */
  onReplaced?: (nc: NatsConnection) => Promise<void>;
}

export interface LastingConnection {
  /** The connection in use now (replaced if nats.js ever closes one). */
  readonly nc: NatsConnection;
  /** Ends for good: drains the connection in use. */
  drain(): Promise<void>;
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : error === undefined ? 'no reason given' : inspect(error));

/**
 * A NATS connection that never stays closed. nats.js reconnects by itself (RECONNECT); should it
 * still close the connection (an authenticator that threw, a server list emptied), a new one is
 * opened, a second apart, until one works, and the owner rebuilds on it. Status events are logged
 * with their reason, so an operator sees why a service went unready.
 */
export async function connectLasting(options: LastingConnectionOptions): Promise<LastingConnection> {
  const { url, log } = options;
  // noAsyncTraces: nats.js otherwise builds two Error objects (stack captures) per publish in
  // case it fails, a cost the run path pays on every publish. Our errors say what failed anyway.
  const open = () => connect({ servers: url, name: options.name, ...RECONNECT, noAsyncTraces: true, ...options.auth });
  let ending = false;
  let nc = await open();

  const watch = (c: NatsConnection) => {
    void (async () => {
      let lastError = 'none';
      for await (const status of c.status()) {
        if (status.type === 'error') {
          lastError = reasonOf(status.error);
          log.warn('NATS error', { server: c.getServer(), error: lastError });
        } else if (status.type === 'disconnect') log.warn('disconnected from NATS', { server: status.server, lastError });
        else if (status.type === 'reconnect') log.info('reconnected to NATS', { server: status.server });
        else if (status.type === 'staleConnection') log.warn('NATS connection stale (no answer to pings)', { server: c.getServer() });
        else if (status.type === 'ldm') log.info('NATS server entering lame duck mode', { server: c.getServer() });
        else if (status.type === 'slowConsumer') log.warn('NATS slow consumer', { sub: status.sub.getSubject() });
        await options.onStatus?.(status);
      }
    })();
    void c.closed().then(async (error) => {
      if (ending) return;
      const reason = reasonOf(error);
      log.error('NATS connection closed by the client; opening a new one', { server: c.getServer(), reason });
      options.onLost?.(reason);
      for (let attempt = 1; !ending; attempt++) {
        let next: NatsConnection;
        try {
          next = await open();
        } catch (e) {
          log.warn('opening a new NATS connection failed; retrying', { attempt, error: reasonOf(e) });
          await new Promise((r) => setTimeout(r, RECONNECT.reconnectTimeWait + Math.random() * RECONNECT.reconnectJitter));
          continue;
        }
        if (ending) return void (await next.close());
        nc = next;
        watch(next);
        log.info('new NATS connection open', { server: next.getServer(), attempt });
        // What fails to be made again here is retried by its own owner (consumers are supervised).
        await options.onReplaced?.(next).catch((e: unknown) => log.warn('rebuilding on the new NATS connection failed', { error: reasonOf(e) }));
        return;
      }
    });
  };
  watch(nc);

  return {
    get nc() {
      return nc;
    },
    async drain() {
      ending = true;
      if (!nc.isClosed()) await nc.drain();
    },
  };
}
