import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';

type Connector = buildConnector.connector;

export interface WarmConnectionsOptions {
  /** At most this many sockets per origin, warm or in use (the HTTP pool's own limit). */
  maxPerOrigin: number;
  /** A warm socket nobody took by then is closed: the run it was opened for went elsewhere. */
  maxIdleMs?: number;
}

interface Origin {
  /** Sockets open now: warm, idle in the pool, or carrying a request. */
  open: number;
  /** Connects under way, ours or the pool's. */
  opening: number;
  warm: { socket: Socket; timer: NodeJS.Timeout; onClose: () => void }[];
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };
const originKey = (protocol: string, hostname: string, port: string | number | null | undefined) =>
  `${protocol}//${hostname.replace(/^\[(.*)\]$/, '$1')}:${port || DEFAULT_PORT[protocol]}`;

/**
 * Connections opened while runs wait for their instant (the dispatch lead), so a call at the
 * instant spends no round trips on TCP and TLS: a minute job whose target closed the last
 * connection long ago still arrives on time, and the first burst to a new target does too.
 *
 * It wraps the connector the HTTP pool uses. The pool asks it for a socket as usual and gets a
 * warm one when there is one; warm sockets come from the same connector, so the egress guard
 * checks them exactly as it checks any other.
 */
export function createWarmConnections(connect: Connector, options: WarmConnectionsOptions) {
  const maxIdleMs = options.maxIdleMs ?? 5000;
  const origins = new Map<string, Origin>();
  /** Runs waiting per origin and instant: the connections each instant will want at once. */
  const waiting = new Map<string, number>();
  let closed = false;

  const originOf = (key: string) => {
    let o = origins.get(key);
    if (!o) origins.set(key, (o = { open: 0, opening: 0, warm: [] }));
    return o;
  };
  const forget = (key: string, o: Origin) => {
    if (o.open === 0 && o.opening === 0 && o.warm.length === 0) origins.delete(key);
  };

  /** Opens through the real connector and counts the socket while it lives. */
  const open = (key: string, opts: buildConnector.Options, callback: Parameters<Connector>[1]) => {
    const o = originOf(key);
    o.opening++;
    connect(opts, (error, socket) => {
      o.opening--;
      if (socket) {
        o.open++;
        socket.once('close', () => {
          o.open--;
          forget(key, o);
        });
        callback(null, socket);
      } else {
        forget(key, o);
        callback(error ?? new Error('connect failed'), null);
      }
    });
  };

  const connector: Connector = (opts, callback) => {
    const key = originKey(opts.protocol, opts.hostname, opts.port);
    const warm = origins.get(key)?.warm.pop();
    if (!warm) return open(key, opts, callback);
    clearTimeout(warm.timer);
    warm.socket.off('close', warm.onClose);
    // Never synchronously: the pool is inside its own resume loop when it asks, and a socket
    // handed back before that loop returns leaves the request waiting.
    process.nextTick(callback, null, warm.socket);
  };

  function warmOne(key: string, url: URL) {
    // The fields the pool itself passes for this origin (undici's client: hostname unbracketed, port '' when default).
    const opts: buildConnector.Options = { protocol: url.protocol, hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'), host: url.host, port: url.port, localAddress: null };
    open(key, opts, (error, socket) => {
      if (error || !socket) return; // the call at the instant connects (and reports) for itself
      if (closed) return socket.destroy();
      const o = originOf(key);
      const entry = {
        socket,
        onClose: () => {
          const i = o.warm.indexOf(entry);
          if (i >= 0) o.warm.splice(i, 1);
          clearTimeout(entry.timer);
        },
        timer: setTimeout(() => socket.destroy(), maxIdleMs),
      };
      entry.timer.unref();
      socket.once('close', entry.onClose);
      o.warm.push(entry);
    });
  }

  return {
    connector,

    /**
     * A run to `url` will go out at `due`: when the runs waiting for that instant outnumber the
     * origin's sockets, open one more now. Returns the call that says the run went (or was dropped).
     */
    expect(url: string, due: number): () => void {
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        return () => {};
      }
      if (!(u.protocol in DEFAULT_PORT) || closed) return () => {};
      const key = originKey(u.protocol, u.hostname, u.port);
      const slot = `${key}@${due}`;
      const want = (waiting.get(slot) ?? 0) + 1;
      waiting.set(slot, want);
      const o = originOf(key);
      const have = o.open + o.opening;
      if (want > have && have < options.maxPerOrigin) warmOne(key, u);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const left = (waiting.get(slot) ?? 1) - 1;
        if (left > 0) waiting.set(slot, left);
        else waiting.delete(slot);
      };
    },

    close() {
      closed = true;
      for (const o of origins.values()) for (const w of [...o.warm]) w.socket.destroy();
    },
  };
}
