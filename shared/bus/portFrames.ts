import type { MessagePort } from 'node:worker_threads';
import type { ConsumerOptions, PublishOptions, StreamConfig } from './bus.ts';

/**
 * What crosses a MessagePort between a thread's Bus (portBus.ts) and the thread that owns the bus
 * (portBusServer.ts). `id` pairs a request with its reply; `d` names one delivery.
 */
export type Request =
  | { t: 'ensureStream'; id: number; config: StreamConfig }
  | { t: 'publish'; id: number; subject: string; data: Uint8Array; options?: PublishOptions }
  | { t: 'notify'; id: number; subject: string; data: Uint8Array }
  | { t: 'consume'; id: number; options: ConsumerOptions }
  | { t: 'stopConsumer'; id: number; cid: number }
  | { t: 'subscribe'; id: number; subject: string }
  | { t: 'unsubscribe'; id: number; sid: number }
  | { t: 'watch'; id: number; stream: string }
  /** Answered with a WatchState. */
  | { t: 'watchCurrent'; id: number; wid: number; timeoutMs: number }
  | { t: 'unwatch'; id: number; wid: number }
  | { t: 'ack'; id: number; d: number };

export type Signal =
  | { t: 'nak'; d: number; delayMs?: number }
  | { t: 'term'; d: number }
  | { t: 'working'; d: number }
  /** The handler of delivery `d` returned (failed: it threw, so the owner naks what is unsettled). */
  | { t: 'done'; d: number; failed: boolean };

export type Reply = { t: 'reply'; id: number; value?: unknown; error?: string };

export type Delivery = {
  t: 'deliver';
  cid: number;
  d: number;
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
  seq: number;
  deliveryCount: number;
};

/** A watched stream's message, for watch `wid`. */
export type WatchEntry = { t: 'entry'; wid: number; subject: string; data: Uint8Array; seq: number };
/** What a watchCurrent request answers: current()'s result and regainedAt() then. */
export type WatchState = { ok: boolean; regainedAt?: number };

export type LiveMessage = { t: 'message'; sid: number; subject: string; data: Uint8Array; headers: Record<string, string> };

export type ToOwner = Request | Signal;
export type FromOwner = Reply | Delivery | LiveMessage | WatchEntry;

/**
 * Frames posted one by one would cost a structured clone and a wake-up each; at thousands of runs
 * a second that is most of a core. Frames queued in one turn of the event loop go as one array.
 */
export function createOutbox<F>(port: MessagePort) {
  let queue: F[] = [];
  let closed = false;
  const flush = () => {
    const frames = queue;
    queue = [];
    if (!closed) port.postMessage(frames);
  };
  return {
    push(frame: F) {
      if (queue.push(frame) === 1) setImmediate(flush);
    },
    close() {
      closed = true;
    },
  };
}

/** A view into a larger buffer would be cloned with all of that buffer: send only its bytes. */
export const own = (data: Uint8Array) => (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice());
