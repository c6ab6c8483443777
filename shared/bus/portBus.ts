import type { MessagePort } from 'node:worker_threads';
import type { Bus, BusMessage, Consumer, MessageHandler, StreamEntry } from './bus.ts';
import { createOutbox, own, type FromOwner, type Request, type ToOwner, type WatchState } from './portFrames.ts';

type Live = (subject: string, data: Uint8Array, headers: Record<string, string>) => void;
type Local = { handler: MessageHandler; stopped: boolean; inFlight: Set<Promise<void>> };

// Distributes a request over the Request union, so each call site is checked against its own shape.
type Without<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

type Out = ReturnType<typeof createOutbox<ToOwner>>;

/** A delivery made by the owning thread; settling it sends a frame back. A class: one per message. */
class Remote implements BusMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Record<string, string>;
  readonly seq: number;
  readonly deliveryCount: number;
  private readonly d: number;

  constructor(
    f: Extract<FromOwner, { t: 'deliver' }>,
    private readonly out: Out,
    private readonly request: (frame: { t: 'ack'; d: number }) => Promise<unknown>,
  ) {
    this.subject = f.subject;
    this.data = f.data;
    this.headers = f.headers;
    this.seq = f.seq;
    this.deliveryCount = f.deliveryCount;
    this.d = f.d;
  }

  async ack() {
    await this.request({ t: 'ack', d: this.d });
  }

  nak(delayMs?: number) {
    this.out.push({ t: 'nak', d: this.d, delayMs });
  }

  term() {
    this.out.push({ t: 'term', d: this.d });
  }

  working() {
    this.out.push({ t: 'working', d: this.d });
  }
}

/**
 * A Bus for a worker thread, served over a MessagePort by the thread that owns the real bus
 * (servePortBus). Embedded mode runs its executor this way, so HTTP calls use the second core
 * while the in-process bus keeps its semantics in one place.
 */
export function createPortBus(port: MessagePort): Bus {
  const out = createOutbox<ToOwner>(port);
  const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const consumers = new Map<number, Local>();
  const subscribers = new Map<number, Live>();
  const watchers = new Map<number, (entry: StreamEntry) => void>();
  let nextId = 0;
  let closed = false;

  // `id` is given when the caller must register what the reply names before deliveries can arrive.
  const request = <T>(frame: Without<Request, 'id'>, id = ++nextId): Promise<T> => {
    if (closed) return Promise.reject(new Error(`bus: ${frame.t}: bus is closed`));
    return new Promise<T>((resolve, reject) => {
      calls.set(id, { resolve: resolve as (value: unknown) => void, reject });
      out.push({ ...frame, id });
    });
  };

  const deliver = (local: Local | undefined, f: Extract<FromOwner, { t: 'deliver' }>) => {
    // Stopped (or never known) here while the delivery was on its way: hand it straight back.
    if (!local || local.stopped) return out.push({ t: 'done', d: f.d, failed: true });
    const { d } = f;
    const msg = new Remote(f, out, request);
    const run = (async () => local.handler(msg))().then(
      () => out.push({ t: 'done', d, failed: false }),
      () => out.push({ t: 'done', d, failed: true }),
    );
    local.inFlight.add(run);
    void run.finally(() => local.inFlight.delete(run));
  };

  port.on('message', (frames: FromOwner[]) => {
    for (const f of frames) {
      if (f.t === 'reply') {
        const call = calls.get(f.id);
        calls.delete(f.id);
        if (f.error === undefined) call?.resolve(f.value);
        else call?.reject(new Error(f.error));
      } else if (f.t === 'deliver') {
        deliver(consumers.get(f.cid), f);
      } else if (f.t === 'entry') {
        watchers.get(f.wid)?.({ subject: f.subject, data: f.data, seq: f.seq });
      } else {
        subscribers.get(f.sid)?.(f.subject, f.data, f.headers);
      }
    }
  });

  /** Keeps `value` under a fresh id the request carries: what the reply's batch brings (first deliveries) finds it. */
  const register = async <V>(map: Map<number, V>, value: V, frame: Without<Request, 'id'>) => {
    const id = ++nextId;
    map.set(id, value);
    try {
      await request(frame, id);
    } catch (error) {
      map.delete(id);
      throw error;
    }
    return id;
  };

  const stopConsumer = async (cid: number, local: Local) => {
    if (local.stopped) return;
    local.stopped = true;
    await Promise.allSettled([...local.inFlight]);
    consumers.delete(cid);
    if (!closed) await request({ t: 'stopConsumer', cid });
  };

  const unwatch = async (wid: number) => {
    if (watchers.delete(wid) && !closed) await request({ t: 'unwatch', wid });
  };

  const unsubscribe = async (sid: number) => {
    if (subscribers.delete(sid) && !closed) await request({ t: 'unsubscribe', sid });
  };

  return {
    ensureStream: (config) => request({ t: 'ensureStream', config }),
    publish: (subject, data, options) => request({ t: 'publish', subject, data: own(data), options }),
    notify: (subject, data) => request({ t: 'notify', subject, data: own(data) }),

    async consume(options, handler): Promise<Consumer> {
      const local: Local = { handler, stopped: false, inFlight: new Set() };
      const cid = await register(consumers, local, { t: 'consume', options });
      return { stop: () => stopConsumer(cid, local) };
    },

    async subscribe(subject, handler) {
      const sid = await register(subscribers, handler, { t: 'subscribe', subject });
      return { unsubscribe: () => unsubscribe(sid) };
    },

    async watch(stream, handler) {
      const wid = await register(watchers, handler, { t: 'watch', stream });
      let regainedAt: number | undefined;
      return {
        async current(timeoutMs) {
          if (!watchers.has(wid) || closed) return false;
          const state = await request<WatchState>({ t: 'watchCurrent', wid, timeoutMs });
          regainedAt = state.regainedAt;
          return state.ok;
        },
        // As of the last current(): the owner's watch is a round trip away.
        regainedAt: () => regainedAt,
        stop: () => unwatch(wid),
      };
    },

    /** Stops this thread's consumers, subscriptions and watches; the owner's bus stays open. */
    async close() {
      if (closed) return;
      for (const wid of [...watchers.keys()]) await unwatch(wid);
      for (const sid of [...subscribers.keys()]) await unsubscribe(sid);
      for (const [cid, local] of [...consumers]) await stopConsumer(cid, local);
      closed = true;
      out.close();
      port.close();
      for (const call of calls.values()) call.reject(new Error('bus: closed'));
      calls.clear();
    },
  };
}
