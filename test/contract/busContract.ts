import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Bus, BusMessage, ConsumerOptions, StreamConfig } from '../../shared/bus/bus.ts';
import { nth } from '../support/nth.ts';
import { sleep, waitFor } from '../support/waitFor.ts';
import { watchContract } from './busWatchContract.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const uid = () => Math.random().toString(36).slice(2, 10);

/**
 * The one Bus contract, run against every adapter. `open` gives a fresh bus per test and a close
 * that also removes whatever the test left on a real server.
 */
export function busContract(name: string, open: () => Promise<{ bus: Bus; close(): Promise<void> }>) {
  describe(`Bus contract: ${name}`, function () {
    let bus: Bus;
    let close: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      close = undefined; // if open() fails, there is nothing to close
      ({ bus, close } = await open());
    });
    afterEach(async () => {
      await close?.();
    });

    /** A stream with a unique name and subject prefix, so tests never see each other. */
    async function stream(retention: StreamConfig['retention'], extra: Partial<StreamConfig> = {}) {
      const id = uid();
      const config: StreamConfig = { name: `T_${id}`, subjects: [`t${id}.>`], retention, duplicateWindowMs: 60_000, ...extra };
      await bus.ensureStream(config);
      return { name: config.name, subject: (s: string) => `t${id}.${s}` };
    }

    /** Consumes, recording every delivery; `onMsg` decides what to do with each (default: ack). */
    async function record(options: ConsumerOptions, onMsg: (m: BusMessage) => unknown = (m) => m.ack()) {
      const got: BusMessage[] = [];
      const consumer = await bus.consume(options, async (m) => {
        got.push(m);
        await onMsg(m);
      });
      return { got, consumer, seqs: () => got.map((m) => m.seq) };
    }

    watchContract(() => bus, stream);

    it('publishes to a stream and consumes with subject, data, headers, seq', async () => {
      const s = await stream('limits');
      const r1 = await bus.publish(s.subject('a'), enc('one'), { headers: { 'x-trace': 't1' } });
      const r2 = await bus.publish(s.subject('b'), enc('two'));
      expect(r1).to.deep.equal({ stream: s.name, seq: 1, duplicate: false });
      expect(r2).to.deep.equal({ stream: s.name, seq: 2, duplicate: false });
      const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 });
      await waitFor(() => c.got.length === 2, 'two messages');
      expect(c.got.map((m) => [m.subject, dec(m.data), m.seq, m.deliveryCount])).to.deep.equal([
        [s.subject('a'), 'one', 1, 1],
        [s.subject('b'), 'two', 2, 1],
      ]);
      expect(c.got[0]!.headers).to.deep.equal({ 'x-trace': 't1' });
      expect(c.got[1]!.headers).to.deep.equal({});
    });

    it('rejects a publish no stream holds and a consumer of a missing stream', async () => {
      const subject = `nowhere${uid()}.x`;
      const publishErr = await bus.publish(subject, enc('x')).then(() => undefined, (e: Error) => e);
      expect(publishErr).to.be.instanceOf(Error);
      expect(publishErr!.message).to.contain(subject);
      const stream = `MISSING_${uid()}`;
      const consumeErr = await bus.consume({ stream, durable: 'd', ackWaitMs: 1000 }, () => undefined).then(() => undefined, (e: Error) => e);
      expect(consumeErr).to.be.instanceOf(Error);
      expect(consumeErr!.message).to.contain(stream);
    });

    it('drops a publish whose msgId was seen within the duplicate window', async () => {
      const s = await stream('limits');
      const first = await bus.publish(s.subject('x'), enc('a'), { msgId: 'id-a' });
      const again = await bus.publish(s.subject('x'), enc('a2'), { msgId: 'id-a' });
      await bus.publish(s.subject('x'), enc('b'), { msgId: 'id-b' });
      expect(again).to.deep.equal({ stream: s.name, seq: first.seq, duplicate: true });
      const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 });
      await waitFor(() => c.got.some((m) => dec(m.data) === 'b'), 'the message after the duplicate');
      expect(c.got.map((m) => dec(m.data))).to.deep.equal(['a', 'b']);
    });

    it('shares one durable between replicas: each message to exactly one, all delivered', async () => {
      const s = await stream('workqueue');
      const options = { stream: s.name, durable: 'workers', ackWaitMs: 30_000, maxAckPending: 10 };
      const work = async (m: BusMessage) => {
        await new Promise((r) => setImmediate(r));
        await m.ack();
      };
      const a = await record(options, work);
      const b = await record(options, work);
      for (let i = 0; i < 100; i++) await bus.publish(s.subject('job'), enc(String(i)));
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
      for (let i = 0; i < 20; i++) await bus.publish(s.subject('e'), enc(String(i)));
      await waitFor(() => a.got.length === 20 && b.got.length === 20, 'both durables to get all 20');
      expect(a.seqs()).to.deep.equal(b.seqs());
    });

    it('redelivers a nak at once, with deliveryCount 2', async () => {
      const s = await stream('limits');
      const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 }, (m) => (m.deliveryCount === 1 ? m.nak() : m.ack()));
      await bus.publish(s.subject('x'), enc('x'));
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
      await bus.publish(s.subject('x'), enc('x'));
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
      await bus.publish(s.subject('x'), enc('x'));
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
      await bus.publish(s.subject('x'), enc('x'));
      await waitFor(() => finished, 'the slow handler');
      expect(c.got.map((m) => m.deliveryCount)).to.deep.equal([1]);
    });

    it('redelivers when the handler throws', async () => {
      const s = await stream('limits');
      const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 }, (m) => {
        if (m.deliveryCount === 1) throw new Error('boom');
        return m.ack();
      });
      await bus.publish(s.subject('x'), enc('x'));
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
      await bus.publish(s.subject('x'), enc('poison'));
      await bus.publish(s.subject('x'), enc('later'));
      await waitFor(() => c.got.some((m) => dec(m.data) === 'later' && m.deliveryCount === 2), 'the later message’s redelivery');
      expect(c.got.filter((m) => dec(m.data) === 'poison')).to.have.length(1);
    });

    it('gives up after maxDeliver deliveries', async () => {
      const s = await stream('limits');
      const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000, maxDeliver: 2 }, (m) =>
        dec(m.data) === 'bad' ? m.nak() : m.ack(),
      );
      await bus.publish(s.subject('x'), enc('bad'));
      await waitFor(() => c.got.length === 2, 'two deliveries');
      await bus.publish(s.subject('x'), enc('marker'));
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
      await bus.consume(options, handler);
      await bus.consume(options, handler);
      for (let i = 0; i < total; i++) await bus.publish(s.subject('job'), enc(String(i)));
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
      for (let i = 1; i <= 4; i++) await bus.publish(s.subject('x'), enc(String(i)));
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
      await bus.publish(s.subject('x'), enc('5'));
      const second = await record(options);
      await waitFor(() => [3, 4, 5].every((n) => second.seqs().includes(n)), 'messages 3, 4 and 5 after restart');
      expect(second.seqs().sort((x, y) => x - y)).to.deep.equal([3, 4, 5]);
      expect(second.got.find((m) => m.seq === 3)!.deliveryCount).to.equal(2);
      expect(second.got.find((m) => m.seq === 5)!.deliveryCount).to.equal(1);
      expect(first.got).to.have.length(4);
    });

    it('starts a deliverPolicy "new" durable after what is already stored', async () => {
      const s = await stream('limits');
      await bus.publish(s.subject('x'), enc('old'));
      const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000, deliverPolicy: 'new' });
      await bus.publish(s.subject('x'), enc('new'));
      await waitFor(() => c.got.length > 0, 'the new message');
      expect(c.got.map((m) => dec(m.data))).to.deep.equal(['new']);
    });

    it('keeps only the newest maxMessages of a limits stream', async () => {
      const s = await stream('limits', { maxMessages: 3 });
      for (let i = 1; i <= 5; i++) await bus.publish(s.subject('x'), enc(String(i)));
      const c = await record({ stream: s.name, durable: 'd', ackWaitMs: 30_000 });
      await waitFor(() => c.got.length === 3, 'three messages');
      expect(c.seqs()).to.deep.equal([3, 4, 5]);
    });

    it('removes acked messages from a workqueue stream', async () => {
      // With maxMessages 5, ten acked messages on one subject would push out the one unconsumed
      // message on another subject, unless acking removed them.
      const s = await stream('workqueue', { maxMessages: 5 });
      await bus.publish(s.subject('b'), enc('kept'));
      const a = await record({ stream: s.name, durable: 'a', filterSubject: s.subject('a'), ackWaitMs: 30_000, maxAckPending: 1 });
      for (let i = 0; i < 10; i++) {
        await bus.publish(s.subject('a'), enc(String(i)));
        await waitFor(() => a.got.length === i + 1, `message ${i} consumed`);
      }
      const b = await record({ stream: s.name, durable: 'b', filterSubject: s.subject('b'), ackWaitMs: 30_000 });
      await waitFor(() => b.got.length === 1, 'the message left on the other subject');
      expect(dec(b.got[0]!.data)).to.equal('kept');
    });

    it('fans out live: subscribers get what is published after they subscribe, wildcards included', async () => {
      const s = await stream('limits');
      const one: string[] = [];
      const all: string[] = [];
      await bus.publish(s.subject('early.x'), enc('before'));
      const subOne = await bus.subscribe(s.subject('*.x'), (subject, data) => one.push(`${subject}=${dec(data)}`));
      await bus.subscribe(s.subject('>'), (subject, data, headers) => all.push(`${subject}=${dec(data)}${headers.k ?? ''}`));
      await bus.publish(s.subject('a.x'), enc('1'), { headers: { k: '!' } });
      await bus.publish(s.subject('a.b.c'), enc('2'));
      await waitFor(() => all.length === 2 && one.length === 1, 'live messages');
      expect(one).to.deep.equal([`${s.subject('a.x')}=1`]);
      expect(all).to.deep.equal([`${s.subject('a.x')}=1!`, `${s.subject('a.b.c')}=2`]);
      await subOne.unsubscribe();
      await bus.publish(s.subject('c.x'), enc('3'));
      await waitFor(() => all.length === 3, 'the message after unsubscribe');
      expect(one).to.have.length(1);
    });

    it('delivers a notice on a subject no stream holds to live subscribers only, storing nothing', async () => {
      const subject = `notice.${randomUUID().slice(0, 8)}`;
      const got: string[] = [];
      await bus.notify(`${subject}.early`, enc('nobody listens'));
      await bus.subscribe(`${subject}.*`, (subj, data) => got.push(`${subj}=${dec(data)}`));
      await bus.notify(`${subject}.a`, enc('hello'));
      await waitFor(() => got.length === 1, 'the notice');
      expect(got).to.deep.equal([`${subject}.a=hello`]);
    });

    it('reports a durable consumer\'s backlog (where the adapter offers it): undelivered, then unacked, then none', async function () {
      if (!bus.backlog) {
        // Optional in the port: a thread's view of a bus reports none.
        console.log('      (skipped: this adapter does not report backlogs, an optional part of the port)');
        this.skip();
      }
      const s = await stream('limits');
      expect(await bus.backlog(s.name, 'nobody'), 'a durable that does not exist').to.equal(undefined);
      const held: BusMessage[] = [];
      const c = await record({ stream: s.name, durable: 'slow', ackWaitMs: 30_000, maxAckPending: 2 }, (m) => void held.push(m));
      for (let i = 0; i < 5; i++) await bus.publish(s.subject('x'), enc(String(i)));
      await waitFor(() => held.length === 2, 'two deliveries');
      await sleep(100);
      expect(await bus.backlog(s.name, 'slow')).to.deep.equal({ pending: 3, ackPending: 2 });
      for (const m of held.splice(0)) await m.ack();
      await waitFor(() => c.got.length === 4, 'two more deliveries');
      for (const m of held.splice(0)) await m.ack();
      await waitFor(() => c.got.length === 5, 'the last delivery');
      for (const m of held.splice(0)) await m.ack();
      let backlog: unknown;
      await waitFor(() => {
        void bus.backlog!(s.name, 'slow').then((b) => (backlog = b));
        return JSON.stringify(backlog) === JSON.stringify({ pending: 0, ackPending: 0 });
      }, 'an empty backlog');
      await c.consumer.stop();
    });
  });
}
