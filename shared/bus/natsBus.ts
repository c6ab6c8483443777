import { RequestError, headers as natsHeaders, nanos, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { JetStreamApiError, RetentionPolicy, StorageType, jetstreamManager, type JetStreamClient, type JetStreamManager, type StreamConfig as NatsStreamConfig } from '@nats-io/jetstream';
import { connectLasting, type LastingConnection } from './natsConnection.ts';
import type { NatsAuth } from './natsAuth.ts';
import { createLogger, type Logger } from '../log.ts';
import type { Readiness } from '../readiness.ts';
import type { Bus, Consumer, ConsumerOptions, MessageHandler, PublishOptions, PublishResult, StreamConfig } from './bus.ts';
import { busError, headersOf, startNatsConsumer } from './natsConsumer.ts';
import { startNatsWatch } from './natsWatch.ts';

const STREAM_NAME_IN_USE = 10058;

/**
 * The bus on NATS JetStream (nats.js v3): file-backed streams, durable pull consumers, core
 * subscriptions for live fan-out. Acks are sent without waiting for the server's confirmation; a
 * lost ack means a redelivery, which at-least-once handlers already tolerate.
 */
export interface NatsBusOptions {
  name?: string;
  /** Gets the `bus` condition (connected or not) and one per consumer (running or being recreated). */
  readiness?: Readiness;
  log?: Logger;
  /** Credentials of this service's NATS user (see natsAuth.ts). */
  auth?: NatsAuth;
}

/** Kept where it was for its importers: every NATS connection of Tock reconnects the same way. */
export { RECONNECT } from './natsConnection.ts';

/** A core subscription, kept so it can be made again on a new connection. */
interface LiveSubscription {
  subject: string;
  handler: Parameters<Bus['subscribe']>[1];
  sub: Subscription;
}

export async function connectNatsBus(url: string, options: NatsBusOptions = {}): Promise<Bus> {
  const log = options.log ?? createLogger('bus', {}, 'warn');
  const { readiness } = options;
  let conn: LastingConnection;
  // Set before the first connection can be replaced (onReplaced runs only after a close).
  let jsm: JetStreamManager;
  let js: JetStreamClient;
  const live = new Set<LiveSubscription>();
  const consumers = new Set<Consumer>();
  const watches = new Set<{ stop(): Promise<void> }>();
  // When the connection last came back (a reconnect, or a new one): a watch tells its reader.
  let reconnectedAt: number | undefined;
  // Streams asked for, so they can be made again on a server that came back without its state.
  const streams = new Map<string, Partial<NatsStreamConfig> & { name: string }>();
  try {
    conn = await connectLasting({
      url,
      name: options.name,
      auth: options.auth,
      log,
      onStatus: async (status) => {
        if (status.type === 'disconnect') readiness?.set('bus', false, `disconnected from NATS (${status.server})`);
        else if (status.type === 'reconnect') {
          reconnectedAt = Date.now();
          await restoreStreams();
          readiness?.set('bus', true);
        }
      },
      onLost: (reason) => readiness?.set('bus', false, `NATS connection closed (${reason}); opening a new one`),
      onReplaced: async (nc) => {
        reconnectedAt = Date.now();
        jsm = await jetstreamManager(nc);
        js = jsm.jetstream();
        await restoreStreams();
        for (const s of live) s.sub = subscribeOn(nc, s);
        await nc.flush();
        readiness?.set('bus', true);
      },
    });
  } catch (e) {
    throw busError(`connect to NATS at ${url}`, e);
  }
  jsm = await jetstreamManager(conn.nc).catch(async (e) => {
    await conn.drain().catch(() => undefined);
    throw busError(`use JetStream at ${url}`, e);
  });
  js = jsm.jetstream();
  async function addStream(cfg: Partial<NatsStreamConfig> & { name: string }) {
    try {
      await jsm.streams.add(cfg);
    } catch (e) {
      if (!(e instanceof JetStreamApiError && e.code === STREAM_NAME_IN_USE)) throw busError(`create stream "${cfg.name}"`, e);
      await jsm.streams.update(cfg.name, cfg).catch((e2) => {
        throw busError(`update stream "${cfg.name}"`, e2);
      });
    }
  }
  async function restoreStreams() {
    for (const cfg of streams.values()) await addStream(cfg).catch((error) => log.warn('stream not restored after reconnect', { stream: cfg.name, error }));
  }
  function subscribeOn(nc: NatsConnection, { subject, handler }: Pick<LiveSubscription, 'subject' | 'handler'>) {
    return nc.subscribe(subject, {
      callback: (err, m) => {
        if (err) return;
        try {
          handler(m.subject, m.data, headersOf(m.headers));
        } catch (e) {
          // A failing live listener must not break the connection's dispatch.
          console.error(`bus: subscriber to "${subject}" threw`, e);
        }
      },
    });
  }
  readiness?.set('bus', true);

  /** The stream as asked for, made again (a server that came back without it); false: never asked for here. */
  const restoreStream = async (name: string) => {
    const cfg = streams.get(name);
    if (!cfg) return false;
    await addStream(cfg);
    return true;
  };

  return {
    async ensureStream(config: StreamConfig) {
      const cfg: Partial<NatsStreamConfig> & { name: string } = {
        name: config.name,
        subjects: config.subjects,
        retention: config.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
        storage: StorageType.File,
        duplicate_window: nanos(config.duplicateWindowMs),
        max_age: nanos(config.maxAgeMs ?? 0),
        max_msgs: config.maxMessages && config.maxMessages > 0 ? config.maxMessages : -1,
      };
      streams.set(config.name, cfg);
      await addStream(cfg);
    },

    async publish(subject: string, data: Uint8Array, options: PublishOptions = {}): Promise<PublishResult> {
      let h: MsgHdrs | undefined;
      if (options.headers) {
        h = natsHeaders();
        for (const [k, v] of Object.entries(options.headers)) h.set(k, v);
      }
      try {
        const ack = await js.publish(subject, data, {
          ...(options.msgId !== undefined && { msgID: options.msgId }),
          ...(h && { headers: h }),
          ...(options.timeoutMs !== undefined && { timeout: options.timeoutMs }),
        });
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (e) {
        // With no stream on the subject the request finds no responders, which nats.js reports as
        // "jetstream is not enabled": say what it means here.
        const noStream = e instanceof Error && e.cause instanceof RequestError && e.cause.isNoResponders();
        throw busError(`publish to "${subject}"`, noStream ? new Error('no stream holds this subject', { cause: e }) : e);
      }
    },

    async consume(options: ConsumerOptions, handler: MessageHandler): Promise<Consumer> {
      // Getters: a consumer recreated after a new connection pulls on the new one.
      const context = {
        get nc() {
          return conn.nc;
        },
        get jsm() {
          return jsm;
        },
        get js() {
          return js;
        },
        log,
        readiness,
        restoreStream,
      };
      const consumer = await startNatsConsumer(context, options, handler, () => consumers.delete(consumer));
      consumers.add(consumer);
      return consumer;
    },

    async watch(stream, handler) {
      const context = {
        get js() {
          return js;
        },
        get jsm() {
          return jsm;
        },
        log,
        reconnectedAt: () => reconnectedAt,
      };
      const watch = await startNatsWatch(context, stream, handler);
      watches.add(watch);
      return { ...watch, stop: () => (watches.delete(watch), watch.stop()) };
    },

    async notify(subject, data) {
      try {
        conn.nc.publish(subject, data);
      } catch (e) {
        throw busError(`notify "${subject}"`, e);
      }
    },

    async subscribe(subject, handler) {
      try {
        const entry: LiveSubscription = { subject, handler, sub: subscribeOn(conn.nc, { subject, handler }) };
        live.add(entry);
        // The server knows of the interest once flushed: from then on nothing published is missed.
        await conn.nc.flush();
        return {
          unsubscribe: async () => {
            live.delete(entry);
            entry.sub.unsubscribe();
            await conn.nc.flush().catch(() => undefined);
          },
        };
      } catch (e) {
        throw busError(`subscribe to "${subject}"`, e);
      }
    },

    async backlog(stream, durable) {
      try {
        const info = await jsm.consumers.info(stream, durable);
        return { pending: info.num_pending, ackPending: info.num_ack_pending };
      } catch {
        return undefined; // no such durable (yet), or the server is away: the scrape goes on without it
      }
    },

    async close() {
      await Promise.all([...consumers].map((c) => c.stop()));
      await Promise.all([...watches].map((w) => w.stop()));
      await conn.drain().catch((e) => {
        throw busError('close', e);
      });
    },
  };
}
