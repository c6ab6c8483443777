import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Bus, BusMessage, ConsumerOptions, StreamConfig } from '../../shared/bus/bus.ts';
import { sleep, waitFor } from '../support/waitFor.ts';
import { deliveryContract } from './busDeliveryContract.ts';
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

    deliveryContract({ bus: () => bus, stream, record });

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
