import type { MessagePort } from 'node:worker_threads';
import type { Bus, BusMessage, Consumer, Watch } from './bus.ts';
import { createOutbox, type FromOwner, type Request, type ToOwner, type WatchState } from './portFrames.ts';

type Open = { msg: BusMessage; cid: number; settle: (failed: boolean) => void };

/**
 * Serves `bus` to a createPortBus() at the other end of `port` (a worker thread). Each delivery
 * stays in flight here until the thread's handler returns, exactly as a local handler would, so
 * ack wait, redelivery and maxAckPending behave as they do in one thread.
 */
export function servePortBus(bus: Bus, port: MessagePort) {
  const out = createOutbox<FromOwner>(port);
  const open = new Map<number, Open>();
  const consumers = new Map<number, Consumer>();
  const subscriptions = new Map<number, { unsubscribe(): Promise<void> }>();
  const watches = new Map<number, Watch>();
  let nextDelivery = 0;
  let closed = false;

  const reply = (id: number, work: () => unknown) => {
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(work());
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => out.push({ t: 'reply', id, value }),
      (error: unknown) => out.push({ t: 'reply', id, error: error instanceof Error ? error.message : String(error) }),
    );
  };

  const consume = (cid: number, options: Extract<Request, { t: 'consume' }>['options']) =>
    bus.consume(options, (msg) => {
      if (closed) throw new Error('bus: the thread is gone');
      const d = ++nextDelivery;
      out.push({ t: 'deliver', cid, d, subject: msg.subject, data: msg.data, headers: msg.headers, seq: msg.seq, deliveryCount: msg.deliveryCount });
      // Rejecting makes the owner's bus nak whatever the handler left unsettled, as for a local throw.
      return new Promise<void>((resolve, reject) => {
        open.set(d, { msg, cid, settle: (failed) => (failed ? reject(new Error('handler failed')) : resolve()) });
      });
    });

  const handle = (f: ToOwner) => {
    switch (f.t) {
      case 'ensureStream': return reply(f.id, () => bus.ensureStream(f.config));
      case 'publish': return reply(f.id, () => bus.publish(f.subject, f.data, f.options));
      case 'notify': return reply(f.id, () => bus.notify(f.subject, f.data));
      case 'consume':
        return reply(f.id, async () => {
          consumers.set(f.id, await consume(f.id, f.options));
          return f.id;
        });
      case 'stopConsumer':
        return reply(f.id, async () => {
          const consumer = consumers.get(f.cid);
          consumers.delete(f.cid);
          await consumer?.stop();
        });
      case 'subscribe':
        return reply(f.id, async () => {
          const sid = f.id;
          subscriptions.set(sid, await bus.subscribe(f.subject, (subject, data, headers) => out.push({ t: 'message', sid, subject, data, headers })));
          return sid;
        });
      case 'unsubscribe':
        return reply(f.id, async () => {
          const sub = subscriptions.get(f.sid);
          subscriptions.delete(f.sid);
          await sub?.unsubscribe();
        });
      case 'watch':
        return reply(f.id, async () => {
          const wid = f.id;
          watches.set(wid, await bus.watch(f.stream, ({ subject, data, seq }) => out.push({ t: 'entry', wid, subject, data, seq })));
          return wid;
        });
      case 'watchCurrent':
        return reply(f.id, async (): Promise<WatchState> => {
          const watch = watches.get(f.wid);
          // The entries it waited for were pushed before this reply: the thread has them first.
          const ok = (await watch?.current(f.timeoutMs)) ?? false;
          return { ok, regainedAt: watch?.regainedAt() };
        });
      case 'unwatch':
        return reply(f.id, async () => {
          const watch = watches.get(f.wid);
          watches.delete(f.wid);
          await watch?.stop();
        });
      case 'ack': return reply(f.id, () => open.get(f.d)?.msg.ack());
      case 'nak': return open.get(f.d)?.msg.nak(f.delayMs);
      case 'term': return open.get(f.d)?.msg.term();
      case 'working': return open.get(f.d)?.msg.working();
      case 'done': {
        const delivery = open.get(f.d);
        open.delete(f.d);
        return delivery?.settle(f.failed);
      }
    }
  };

  port.on('message', (frames: ToOwner[]) => {
    for (const f of frames) handle(f);
  });

  return {
    /**
     * The thread is gone (stopped or died): what it held goes back to the bus for redelivery and
     * its consumers and subscriptions end.
     */
    async close() {
      if (closed) return;
      closed = true;
      out.close();
      port.close();
      for (const delivery of open.values()) delivery.settle(true);
      open.clear();
      await Promise.allSettled([...consumers.values()].map((c) => c.stop()));
      await Promise.allSettled([...subscriptions.values()].map((s) => s.unsubscribe()));
      await Promise.allSettled([...watches.values()].map((w) => w.stop()));
      watches.clear();
      consumers.clear();
      subscriptions.clear();
    },
  };
}
