import { expect } from 'chai';
import type { Bus, BusMessage, Consumer, ConsumerOptions, StreamConfig } from '../../shared/bus/bus.ts';
import { nth } from '../support/nth.ts';
import { sleep, waitFor } from '../support/waitFor.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** What the delivery cases use of busContract.ts's setup: its bus, its stream maker and its recording consumer. */
export interface DeliveryContext {
  bus(): Bus;
  stream(retention: StreamConfig['retention']): Promise<{ name: string; subject: (s: string) => string }>;
  record(options: ConsumerOptions, onMsg?: (m: BusMessage) => unknown): Promise<{ got: BusMessage[]; consumer: Consumer; seqs(): number[] }>;
}

/**
 * Durable consumers, part of the Bus contract (busContract.ts calls it): sharing and fan-out,
 * redelivery (nak, ack wait, a throwing handler), term, maxDeliver, maxAckPending, resuming and
 * the deliver policy.
 */
export function deliveryContract({ bus, stream, record }: DeliveryContext) {
  it('shares one durable between replicas: each message to exactly one, all delivered', async () => {
    const s = await stream('workqueue');
    const options = { stream: s.name, durable: 'workers', ackWaitMs: 30_000, maxAckPending: 10 };
    const work = async (m: BusMessage) => {
      await new Promise((r) => setImmediate(r));
      await m.ack();
    };
    const a = await record(options, work);
    const b = await record(options, work);
    for (let i = 0; i < 100; i++) await bus().publish(s.subject('job'), enc(String(i)));
    await waitFor(() => a.got.length + b.got.length >= 100, 'all 100 messages');
    const all = [...a.seqs(), ...b.seqs()].sort((x, y) => x - y);
    expect(all).to.deep.equal(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(a.got.length, 'replica a got some').to.be.greaterThan(0);
    expect(b.got.length, 'replica b got some').to.be.greaterThan(0);
  });

  it('fans out a limits stream: each durable gets every message', async () => {
    const s = await stream('limits');
    const a = await record({ stream: s.name, durable: 'a', ackWaitMs: 30_000 });
    const b = await record({ stream: s.name, durable: 'b', ackWaitMs: 30_000 });
    for (let i = 0; i < 20; i++) await bus().publish(s.subject('e'), enc(String(i)));
    await waitFor(() => a.got.length === 20 && b.got.length === 20, 'both durables to get all 20');
    expect(a.seqs()).to.deep.equal(b.seqs());
  });

  it('redelivers a nak at once, with deliveryCount 2', async () => {
    const s = await stream('limits');
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 }, (m) => (m.deliveryCount === 1 ? m.nak() : m.ack()));
    await bus().publish(s.subject('x'), enc('x'));
    await waitFor(() => c.got.length === 2, 'the redelivery');
    expect(c.got.map((m) => [m.seq, m.deliveryCount])).to.deep.equal([[1, 1], [1, 2]]);
  });

  it('redelivers a nak with a delay no sooner than the delay', async () => {
    const s = await stream('limits');
    const times: number[] = [];
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 }, (m) => {
      times.push(Date.now());
      return m.deliveryCount === 1 ? m.nak(400) : m.ack();
    });
    await bus().publish(s.subject('x'), enc('x'));
    await waitFor(() => c.got.length === 2, 'the delayed redelivery');
    expect(c.got[1]!.deliveryCount).to.equal(2);
    expect(nth(times, 1) - nth(times, 0)).to.be.at.least(400);
  });

  it('redelivers a message neither acked nor nak’ed after ackWait', async () => {
    const s = await stream('limits');
    const times: number[] = [];
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 300 }, (m) => {
      times.push(Date.now());
      if (m.deliveryCount > 1) return m.ack();
    });
    await bus().publish(s.subject('x'), enc('x'));
    await waitFor(() => c.got.length === 2, 'the redelivery after ack wait');
    expect(c.got[1]!.deliveryCount).to.equal(2);
    // The server starts the ack timer a little before the client sees the message.
    expect(nth(times, 1) - nth(times, 0)).to.be.at.least(250);
  });

  it('does not redeliver while the handler reports working()', async () => {
    const s = await stream('limits');
    let finished = false;
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 500 }, async (m) => {
      if (m.deliveryCount > 1) return m.ack();
      for (let i = 0; i < 5; i++) {
        await sleep(200); // the handler's own work, 1 s in all: twice the ack wait
        m.working();
      }
      await m.ack();
      finished = true;
    });
    await bus().publish(s.subject('x'), enc('x'));
    await waitFor(() => finished, 'the slow handler');
    expect(c.got.map((m) => m.deliveryCount)).to.deep.equal([1]);
  });

  it('redelivers when the handler throws', async () => {
    const s = await stream('limits');
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 }, (m) => {
      if (m.deliveryCount === 1) throw new Error('boom');
      return m.ack();
    });
    await bus().publish(s.subject('x'), enc('x'));
    await waitFor(() => c.got.length === 2, 'the redelivery');
    expect(c.got[1]!.deliveryCount).to.equal(2);
  });

  it('never redelivers a term’ed message', async () => {
    const s = await stream('limits');
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 300 }, (m) => {
      if (dec(m.data) === 'poison') return m.term();
      if (m.deliveryCount > 1) return m.ack();
      // Left unacked: its redelivery after ack wait comes after the poison one's would have.
    });
    await bus().publish(s.subject('x'), enc('poison'));
    await bus().publish(s.subject('x'), enc('later'));
    await waitFor(() => c.got.some((m) => dec(m.data) === 'later' && m.deliveryCount === 2), 'the later message’s redelivery');
    expect(c.got.filter((m) => dec(m.data) === 'poison')).to.have.length(1);
  });

  it('gives up after maxDeliver deliveries', async () => {
    const s = await stream('limits');
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000, maxDeliver: 2 }, (m) =>
      dec(m.data) === 'bad' ? m.nak() : m.ack(),
    );
    await bus().publish(s.subject('x'), enc('bad'));
    await waitFor(() => c.got.length === 2, 'two deliveries');
    await bus().publish(s.subject('x'), enc('marker'));
    await waitFor(() => c.got.some((m) => dec(m.data) === 'marker'), 'the marker');
    expect(c.got.filter((m) => dec(m.data) === 'bad').map((m) => m.deliveryCount)).to.deep.equal([1, 2]);
  });

  it('bounds unacked messages by maxAckPending across replicas', async () => {
    const s = await stream('workqueue');
    const total = 8;
    const gates: (() => void)[] = [];
    let inFlight = 0;
    let most = 0;
    let done = 0;
    const handler = async (m: BusMessage) => {
      most = Math.max(most, ++inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
      done++;
      await m.ack();
    };
    const options = { stream: s.name, durable: 'limited', ackWaitMs: 30_000, maxAckPending: 2 };
    await bus().consume(options, handler);
    await bus().consume(options, handler);
    for (let i = 0; i < total; i++) await bus().publish(s.subject('job'), enc(String(i)));
    while (done < total) {
      await waitFor(() => inFlight === Math.min(2, total - done), `${Math.min(2, total - done)} in flight`);
      const before = done;
      gates.shift()!();
      await waitFor(() => done > before, 'the released handler to finish');
    }
    expect(most).to.equal(2);
  });

  it('resumes a stopped durable: acked messages stay acked, unacked ones come back', async () => {
    const s = await stream('limits');
    const options = { stream: s.name, durable: 'resume', ackWaitMs: 300 };
    for (let i = 1; i <= 4; i++) await bus().publish(s.subject('x'), enc(String(i)));
    let lastSettled = false;
    const first = await record(options, async (m) => {
      if (m.seq <= 2) return m.ack();
      if (m.seq === 4) {
        await sleep(50); // stop() must wait for this handler
        lastSettled = true;
      }
    });
    await waitFor(() => first.got.length === 4, 'the first four');
    await first.consumer.stop();
    expect(lastSettled).to.equal(true);
    await bus().publish(s.subject('x'), enc('5'));
    const second = await record(options);
    await waitFor(() => [3, 4, 5].every((n) => second.seqs().includes(n)), 'messages 3, 4 and 5 after restart');
    expect(second.seqs().sort((x, y) => x - y)).to.deep.equal([3, 4, 5]);
    expect(second.got.find((m) => m.seq === 3)!.deliveryCount).to.equal(2);
    expect(second.got.find((m) => m.seq === 5)!.deliveryCount).to.equal(1);
    expect(first.got).to.have.length(4);
  });

  it('starts a deliverPolicy "new" durable after what is already stored', async () => {
    const s = await stream('limits');
    await bus().publish(s.subject('x'), enc('old'));
    const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000, deliverPolicy: 'new' });
    await bus().publish(s.subject('x'), enc('new'));
    await waitFor(() => c.got.length > 0, 'the new message');
    expect(c.got.map((m) => dec(m.data))).to.deep.equal(['new']);
  });
}
