import { expect } from 'chai';
import type { Bus, StreamConfig, StreamEntry } from '../../shared/bus/bus.ts';
import { waitFor } from '../support/waitFor.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

type MakeStream = (retention: StreamConfig['retention']) => Promise<{ name: string; subject: (s: string) => string }>;

/** Bus.watch, part of the Bus contract (busContract.ts calls it with its bus and its stream maker). */
export function watchContract(bus: () => Bus, stream: MakeStream) {
  const reader = async (name: string) => {
    const got: StreamEntry[] = [];
    const watch = await bus().watch(name, (entry) => got.push(entry));
    return { got, watch, texts: () => got.map((e) => `${e.seq}:${e.subject}=${dec(e.data)}`) };
  };

  it('watches a stream: what it holds, then what is stored after, in order; current() once all of it is handed over', async () => {
    const s = await stream('limits');
    await bus().publish(s.subject('a'), enc('one'));
    await bus().publish(s.subject('b'), enc('two'));
    const r = await reader(s.name);
    // No waiting but current(): what it resolves true for is in the handler already.
    expect(await r.watch.current(10_000)).to.equal(true);
    expect(r.texts()).to.deep.equal([`1:${s.subject('a')}=one`, `2:${s.subject('b')}=two`]);
    await bus().publish(s.subject('c'), enc('three'));
    expect(await r.watch.current(10_000)).to.equal(true);
    expect(r.texts()).to.deep.equal([`1:${s.subject('a')}=one`, `2:${s.subject('b')}=two`, `3:${s.subject('c')}=three`]);
    expect(r.watch.regainedAt(), 'a watch that never lost the bus').to.equal(undefined);
    await r.watch.stop();
  });

  it('gives every watch every message, and takes none from a durable consumer', async () => {
    const s = await stream('limits');
    const one = await reader(s.name);
    const two = await reader(s.name);
    await bus().publish(s.subject('x'), enc('1'));
    await bus().publish(s.subject('y'), enc('2'));
    expect(await one.watch.current(10_000)).to.equal(true);
    expect(await two.watch.current(10_000)).to.equal(true);
    expect(one.texts()).to.deep.equal(two.texts()).and.to.have.length(2);
    const consumed: string[] = [];
    await bus().consume({ stream: s.name, durable: 'd', ackWaitMs: 30_000 }, async (m) => {
      consumed.push(dec(m.data));
      await m.ack();
    });
    await waitFor(() => consumed.length === 2, 'the durable to get both messages');
    expect(consumed).to.deep.equal(['1', '2']);
    await one.watch.stop();
    await two.watch.stop();
  });

  it('hands nothing over once stopped, and refuses a stream that does not exist', async () => {
    const s = await stream('limits');
    const r = await reader(s.name);
    await bus().publish(s.subject('a'), enc('kept'));
    expect(await r.watch.current(10_000)).to.equal(true);
    await r.watch.stop();
    await bus().publish(s.subject('b'), enc('after the stop'));
    const later = await reader(s.name);
    expect(await later.watch.current(10_000)).to.equal(true);
    expect(later.got).to.have.length(2);
    expect(r.got.map((e) => dec(e.data))).to.deep.equal(['kept']);
    await later.watch.stop();
    let error: unknown;
    await bus().watch('NO_SUCH_STREAM', () => undefined).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/stream not found/);
    // A work queue gives each message to one consumer: JetStream refuses a reader without acks there.
    const queue = await stream('workqueue');
    error = undefined;
    await bus().watch(queue.name, () => undefined).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/bus: watch stream/);
  });
}
