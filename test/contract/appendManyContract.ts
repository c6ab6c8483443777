/**
 * The appendMany part of the EventStore contract (eventStoreContract.ts runs it for each adapter):
 * several streams in one call, each with its expected revision, all or nothing. EventStoreDB's
 * adapter appends stream by stream (its client has no append to several streams), so there the
 * suite checks the weaker promise the port states: the streams before a refused one are written.
 */
import { expect } from 'chai';
import { AppError } from '../../shared/errors.ts';
import { WrongExpectedRevisionError, type EventData, type EventStore, type RecordedEvent, type Subscription } from '../../shared/eventStore/eventStore.ts';
import { waitFor } from '../support/waitFor.ts';
import { rejection } from '../support/rejection.ts';

const ev = (type: string, data: Record<string, unknown> = {}): EventData => ({ type, data });
const revisions = (events: RecordedEvent[]) => events.map((e) => e.revision);

export interface AppendManyContext {
  store(): EventStore;
  /** This test's category: its streams are `${cat}-...`. */
  cat(): string;
  /** Keeps a subscription for the test's end. */
  keep(subscription: Subscription): void;
}

export function appendManyContract(ctx: AppendManyContext, { atomic }: { atomic: boolean }) {
  describe('appendMany', () => {
    const read = (name: string) => ctx.store().readStream(`${ctx.cat()}-${name}`);

    it('appends to several new streams in one call: revisions from 0, positions in the order given', async () => {
      const cat = ctx.cat();
      const seen: RecordedEvent[] = [];
      const subscription = ctx.store().subscribe({ category: cat }, (e) => void seen.push(e));
      ctx.keep(subscription);
      await subscription.caughtUp;
      const names = ['c', 'a', 'b'];
      const results = await ctx.store().appendMany(names.map((name, i) => ({ stream: `${cat}-${name}`, events: [ev('Created', { i }), ev('Ran', { i })], expectedRevision: 'no_stream' })));
      expect(results.map((r) => r.nextRevision)).to.deep.equal([1, 1, 1]);
      const positions = results.map((r) => r.position);
      expect(positions[0]! < positions[1]! && positions[1]! < positions[2]!, `positions ${positions.join(', ')}`).to.equal(true);
      for (const [i, name] of names.entries()) {
        const events = await read(name);
        expect(revisions(events)).to.deep.equal([0, 1]);
        expect(events.map((e) => e.data.i)).to.deep.equal([i, i]);
        expect(events[1]!.position).to.equal(results[i]!.position);
      }
      await waitFor(() => seen.length === 6, 'the subscription to see every event');
      expect(seen.map((e) => `${e.stream.slice(cat.length + 1)}${e.revision}`)).to.deep.equal(['c0', 'c1', 'a0', 'a1', 'b0', 'b1']);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.position > seen[i - 1]!.position).to.equal(true);
    });

    it('checks each stream against its own expected revision', async () => {
      const cat = ctx.cat();
      await ctx.store().appendToStream(`${cat}-x`, [ev('A'), ev('B')]);
      await ctx.store().appendToStream(`${cat}-y`, [ev('A')]);
      const results = await ctx.store().appendMany([
        { stream: `${cat}-x`, events: [ev('C')], expectedRevision: 1 },
        { stream: `${cat}-y`, events: [ev('B')], expectedRevision: 'stream_exists' },
        { stream: `${cat}-z`, events: [ev('A')] },
      ]);
      expect(results.map((r) => r.nextRevision)).to.deep.equal([2, 1, 0]);
      expect(revisions(await read('x'))).to.deep.equal([0, 1, 2]);
    });

    it(atomic ? 'refuses the whole call when one stream is not at its expected revision, writing nothing' : 'refuses at the first stream not at its expected revision, the streams before it written', async () => {
      const cat = ctx.cat();
      await ctx.store().appendToStream(`${cat}-taken`, [ev('A')]);
      const error = await rejection(
        ctx.store().appendMany([
          { stream: `${cat}-first`, events: [ev('New')], expectedRevision: 'no_stream' },
          { stream: `${cat}-taken`, events: [ev('New')], expectedRevision: 'no_stream' },
          { stream: `${cat}-last`, events: [ev('New')], expectedRevision: 'no_stream' },
        ]),
      );
      expect(error).to.be.instanceOf(WrongExpectedRevisionError);
      expect(error).to.include({ stream: `${cat}-taken`, expected: 'no_stream', actual: 0 });
      expect(await read('first')).to.have.length(atomic ? 0 : 1);
      expect(revisions(await read('taken'))).to.deep.equal([0]);
      expect(await read('last')).to.deep.equal([]);
    });

    if (atomic) {
      it('lets exactly one of several concurrent calls creating one stream win; the others write none of their streams', async () => {
        const cat = ctx.cat();
        const attempts = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) =>
            ctx.store().appendMany([
              { stream: `${cat}-own${i}`, events: [ev('Mine', { i })], expectedRevision: 'no_stream' },
              { stream: `${cat}-shared`, events: [ev('Shared', { i })], expectedRevision: 'no_stream' },
            ]),
          ),
        );
        const won = attempts.flatMap((a, i) => (a.status === 'fulfilled' ? [i] : []));
        expect(won).to.have.length(1);
        for (const a of attempts) if (a.status === 'rejected') expect(a.reason).to.be.instanceOf(WrongExpectedRevisionError);
        expect((await read('shared')).map((e) => e.data.i)).to.deep.equal(won);
        for (let i = 0; i < 6; i++) expect(await read(`own${i}`), `own${i}`).to.have.length(i === won[0] ? 1 : 0);
      });
    }

    it('refuses a stream named twice or given no event, before writing anything', async () => {
      const cat = ctx.cat();
      const twice = await rejection(ctx.store().appendMany([{ stream: `${cat}-a`, events: [ev('A')] }, { stream: `${cat}-b`, events: [ev('B')] }, { stream: `${cat}-a`, events: [ev('C')] }]));
      expect(twice).to.be.instanceOf(AppError);
      const empty = await rejection(ctx.store().appendMany([{ stream: `${cat}-a`, events: [ev('A')] }, { stream: `${cat}-b`, events: [] }]));
      expect(empty).to.be.instanceOf(AppError);
      expect(await read('a')).to.deep.equal([]);
      expect(await ctx.store().appendMany([])).to.deep.equal([]);
    });

    it('keeps the max count of a stream it appends to', async () => {
      const cat = ctx.cat();
      await ctx.store().appendToStream(`${cat}-m`, [ev('E'), ev('E'), ev('E')]);
      await ctx.store().setStreamMaxCount(`${cat}-m`, 2);
      await ctx.store().appendMany([{ stream: `${cat}-m`, events: [ev('E'), ev('E')], expectedRevision: 2 }, { stream: `${cat}-n`, events: [ev('E')] }]);
      expect(revisions(await read('m'))).to.deep.equal([3, 4]);
      expect(revisions(await read('n'))).to.deep.equal([0]);
    });
  });
}
