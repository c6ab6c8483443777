import { nanos, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  ReplayPolicy,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { Logger } from '../log.ts';
import type { Readiness } from '../readiness.ts';
import { supervise, type SupervisedRun } from '../supervise.ts';
import type { BusMessage, Consumer, ConsumerOptions, MessageHandler } from './bus.ts';

/** NATS's default for pull consumers, made explicit so both adapters agree. */
const DEFAULT_MAX_ACK_PENDING = 1000;
/** Messages asked for per pull request. */
const MAX_BATCH = 1000;
const MSG_ID_HEADER = 'Nats-Msg-Id';
const STREAM_NOT_FOUND = 10059;

/** The one place driver errors become bus errors: what was attempted, on what, and why. */
export function busError(action: string, e: unknown): Error {
  let why = e instanceof Error ? e.message : String(e);
  if (e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) why = 'stream not found';
  return new Error(`bus: ${action}: ${why}`, { cause: e });
}

/** A message's headers as the bus hands them over. */
export function headersOf(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  // The de-duplication id is the bus's business, not the handler's (the in-process bus has none).
  for (const key of h.keys()) if (key !== MSG_ID_HEADER) out[key] = h.get(key);
  return out;
}

async function upsertConsumer(jsm: JetStreamManager, stream: string, config: ConsumerConfig) {
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
    headers: headersOf(m.headers),
    seq: m.seq,
    deliveryCount: m.info.deliveryCount,
    ack: async () => m.ack(),
    nak: (delayMs) => m.nak(delayMs && delayMs > 0 ? delayMs : undefined),
    term: () => m.term(),
    working: () => m.working(),
  };
}

/** What a consumer needs of its bus: the connection, JetStream, and a way to make a lost stream again. */
export interface NatsConsumerContext {
  nc: NatsConnection;
  jsm: JetStreamManager;
  js: JetStreamClient;
  log: Logger;
  readiness?: Readiness;
  /** Makes the stream again as it was asked for; false when it never was on this bus. */
  restoreStream(name: string): Promise<boolean>;
}

/**
 * A durable pull consumer on JetStream: at most `maxAckPending` messages in the handler at once,
 * each acked (or nak'ed) by it; the durable is made again, under supervision, whenever the server
 * loses it or its stream, and its readiness condition says meanwhile that it is not running.
 * `onStop` runs once when it is stopped.
 */
export async function startNatsConsumer(context: NatsConsumerContext, options: ConsumerOptions, handler: MessageHandler, onStop: () => void): Promise<Consumer> {
  // nc, jsm and js are read at each use: the bus may have replaced its connection since.
  const { log, readiness, restoreStream } = context;
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
      await upsertConsumer(context.jsm, options.stream, config).catch(async (e) => {
        // The server came back without the stream: make it again from what was asked for.
        if (!(e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) || !(await restoreStream(options.stream))) throw e;
        await upsertConsumer(context.jsm, options.stream, config);
      });
      const consumer = await context.js.consumers.get(options.stream, options.durable);
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
      onStop();
      wake?.();
      await supervisor.stop();
      await Promise.allSettled([...running]);
      // Acks go out without confirmation: make sure the last ones left before we return.
      await context.nc.flush().catch(() => undefined);
    },
  };
  return consumer;
}
