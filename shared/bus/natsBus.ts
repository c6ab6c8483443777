import { RequestError, connect, headers as natsHeaders, nanos, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiError, RetentionPolicy, StorageType, jetstreamManager, type StreamConfig as NatsStreamConfig } from '@nats-io/jetstream';
import type { NatsAuth } from './natsAuth.ts';
import { createLogger, type Logger } from '../log.ts';
import type { Readiness } from '../readiness.ts';
import type { Bus, Consumer, ConsumerOptions, MessageHandler, PublishOptions, PublishResult, StreamConfig } from './bus.ts';
import { busError, headersOf, startNatsConsumer } from './natsConsumer.ts';

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

/** Client reconnect settings shared by every NATS connection of Tock: try forever, a second apart (with jitter). */
export const RECONNECT = { maxReconnectAttempts: -1, reconnectTimeWait: 1000, reconnectJitter: 500 } as const;

export async function connectNatsBus(url: string, options: NatsBusOptions = {}): Promise<Bus> {
  const log = options.log ?? createLogger('bus', {}, 'warn');
  const { readiness } = options;
  let nc: NatsConnection;
  try {
    // noAsyncTraces: nats.js otherwise builds two Error objects (stack captures) per publish in
    // case it fails, a cost the run path pays on every publish. Our errors say what failed anyway.
    nc = await connect({ servers: url, name: options.name, ...RECONNECT, noAsyncTraces: true, ...options.auth });
  } catch (e) {
    throw busError(`connect to NATS at ${url}`, e);
  }
  const jsm = await jetstreamManager(nc).catch(async (e) => {
    await nc.close();
    throw busError(`use JetStream at ${url}`, e);
  });
  const js = jsm.jetstream();
  const consumers = new Set<Consumer>();
  // Streams asked for, so they can be made again on a server that came back without its state.
  const streams = new Map<string, Partial<NatsStreamConfig> & { name: string }>();
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
  readiness?.set('bus', true);
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') readiness?.set('bus', false, `disconnected from NATS (${status.server})`);
      else if (status.type === 'reconnect') {
        for (const cfg of streams.values()) await addStream(cfg).catch((error) => log.warn('stream not restored after reconnect', { stream: cfg.name, error }));
        readiness?.set('bus', true);
        log.info('reconnected to NATS', { server: status.server });
      }
    }
  })();

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
        const ack = await js.publish(subject, data, { ...(options.msgId !== undefined && { msgID: options.msgId }), ...(h && { headers: h }) });
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (e) {
        // With no stream on the subject the request finds no responders, which nats.js reports as
        // "jetstream is not enabled": say what it means here.
        const noStream = e instanceof Error && e.cause instanceof RequestError && e.cause.isNoResponders();
        throw busError(`publish to "${subject}"`, noStream ? new Error('no stream holds this subject', { cause: e }) : e);
      }
    },

    async consume(options: ConsumerOptions, handler: MessageHandler): Promise<Consumer> {
      const consumer = await startNatsConsumer({ nc, jsm, js, log, readiness, restoreStream }, options, handler, () => consumers.delete(consumer));
      consumers.add(consumer);
      return consumer;
    },

    async notify(subject, data) {
      try {
        nc.publish(subject, data);
      } catch (e) {
        throw busError(`notify "${subject}"`, e);
      }
    },

    async subscribe(subject, handler) {
      try {
        const sub = nc.subscribe(subject, {
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
        // The server knows of the interest once flushed: from then on nothing published is missed.
        await nc.flush();
        return {
          unsubscribe: async () => {
            sub.unsubscribe();
            await nc.flush().catch(() => undefined);
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
      if (nc.isClosed()) return;
      await nc.drain().catch((e) => {
        throw busError('close', e);
      });
    },
  };
}
