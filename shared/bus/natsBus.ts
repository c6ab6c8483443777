import { RequestError, connect, headers as natsHeaders, nanos, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  jetstreamManager,
  type ConsumerConfig,
  type ConsumerMessages,
  type JsMsg,
  type StreamConfig as NatsStreamConfig,
} from '@nats-io/jetstream';
import type { NatsAuth } from './natsAuth.ts';
import { createLogger, type Logger } from '../log.ts';
import type { Readiness } from '../readiness.ts';
import { supervise, type SupervisedRun } from '../supervise.ts';
import type { Bus, BusMessage, Consumer, ConsumerOptions, MessageHandler, PublishOptions, PublishResult, StreamConfig } from './bus.ts';

/** NATS's default for pull consumers, made explicit so both adapters agree. */
const DEFAULT_MAX_ACK_PENDING = 1000;
/** Messages asked for per pull request. */
const MAX_BATCH = 1000;
const MSG_ID_HEADER = 'Nats-Msg-Id';
const STREAM_NAME_IN_USE = 10058;
const STREAM_NOT_FOUND = 10059;

/** The one place driver errors become bus errors: what was attempted, on what, and why. */
function busError(action: string, e: unknown): Error {
  let why = e instanceof Error ? e.message : String(e);
  if (e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) why = 'stream not found';
  return new Error(`bus: ${action}: ${why}`, { cause: e });
}

function toRecord(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  // The de-duplication id is the bus's business, not the handler's (the in-process bus has none).
  for (const key of h.keys()) if (key !== MSG_ID_HEADER) out[key] = h.get(key);
  return out;
}

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
    // case it fails; that was a tenth of an executor's CPU. Our errors say what failed anyway.
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

  async function upsertConsumer(stream: string, config: ConsumerConfig) {
    try {
      await jsm.consumers.add(stream, config);
    } catch (e) {
      // An existing durable with another config: newer servers refuse the create, so update the
      // fields that may change (the deliver policy only counts when the durable is first made).
      if (!(e instanceof JetStreamApiError) || e.code === STREAM_NOT_FOUND) throw e;
      const { ack_wait, max_ack_pending, max_deliver, filter_subject } = config;
      await jsm.consumers.update(stream, config.durable_name!, { ack_wait, max_ack_pending, max_deliver, filter_subject });
    }
  }

  function wrap(m: JsMsg): BusMessage {
    return {
      subject: m.subject,
      data: m.data,
      headers: toRecord(m.headers),
      seq: m.seq,
      deliveryCount: m.info.deliveryCount,
      ack: async () => m.ack(),
      nak: (delayMs) => m.nak(delayMs && delayMs > 0 ? delayMs : undefined),
      term: () => m.term(),
      working: () => m.working(),
    };
  }

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
      const what = `consume "${options.durable}" on stream "${options.stream}"`;
      const limit = options.maxAckPending ?? DEFAULT_MAX_ACK_PENDING;
      const config: ConsumerConfig = {
        durable_name: options.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: options.deliverPolicy === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
        ack_wait: nanos(options.ackWaitMs),
        max_ack_pending: limit,
        max_deliver: options.maxDeliver ?? -1,
        replay_policy: ReplayPolicy.Instant,
        ...(options.filterSubject && { filter_subject: options.filterSubject }),
      };
      // One run: (re)create the durable and pull from it until stopped or lost.
      const startRun = async (): Promise<SupervisedRun> => {
        let iterator: ConsumerMessages;
        try {
          await upsertConsumer(options.stream, config).catch(async (e) => {
            // The server came back without the stream: make it again from what was asked for.
            const stream = streams.get(options.stream);
            if (!(e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) || !stream) throw e;
            await addStream(stream);
            await upsertConsumer(options.stream, config);
          });
          const consumer = await js.consumers.get(options.stream, options.durable);
          // Missing stream or durable ends the run, so the supervisor makes them again.
          iterator = await consumer.consume({ max_messages: Math.min(limit, MAX_BATCH), abort_on_missing_resource: true });
        } catch (e) {
          throw busError(what, e);
        }
        let stopping = false;
        const ended = (async () => {
          for await (const m of iterator) {
            while (inFlight >= limit && !stopped) await new Promise<void>((r) => (wake = r));
            // Already buffered when stop() came: hand back now rather than after ack wait.
            if (stopped || stopping) m.nak();
            else run(m);
          }
          const closed = await iterator.closed();
          if (closed instanceof Error) throw closed;
        })();
        ended.catch(() => undefined);
        return {
          ended,
          async stop() {
            stopping = true;
            await iterator.close().catch(() => undefined);
            await ended.catch(() => undefined);
          },
        };
      };

      let stopped = false;
      let inFlight = 0;
      let wake: (() => void) | undefined;
      const running = new Set<Promise<void>>();
      const run = (m: JsMsg) => {
        inFlight++;
        const p = (async () => {
          try {
            await handler(wrap(m));
          } catch {
            m.nak(); // a no-op when the handler already settled the message
          }
        })().finally(() => {
          inFlight--;
          running.delete(p);
          wake?.();
        });
        running.add(p);
      };
      // The first run must work (a bad config fails the caller); later ones are retried forever.
      const first = await startRun();
      let initial: SupervisedRun | null = first;
      const supervisor = supervise({
        name: `consumer ${options.durable}`,
        log,
        readiness,
        start: async () => {
          const next = initial ?? (await startRun());
          initial = null;
          return next;
        },
      });
      await supervisor.started;

      const consumer: Consumer = {
        async stop() {
          if (stopped) return;
          stopped = true;
          consumers.delete(consumer);
          wake?.();
          await supervisor.stop();
          await Promise.allSettled([...running]);
          // Acks go out without confirmation: make sure the last ones left before we return.
          await nc.flush().catch(() => undefined);
        },
      };
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
              handler(m.subject, m.data, toRecord(m.headers));
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
