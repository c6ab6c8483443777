/**
 * The one behavioural contract of the EventStore port, run against every adapter
 * (test/contract/eventStore.test.ts). Stream and category names are unique per test, so the suite
 * can share a database server with other runs: subscriptions to all streams ignore foreign events.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  WrongExpectedRevisionError,
  type EventData,
  type EventStore,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../shared/eventStore/eventStore.ts';
import { nth } from '../support/nth.ts';
import { appendManyContract } from './appendManyContract.ts';
import { subscribeContract } from './eventStoreSubscribeContract.ts';
import { waitFor } from '../support/waitFor.ts';
import { rejection } from '../support/rejection.ts';
import { expectStrictlyIncreasing } from '../support/strictlyIncreasing.ts';

const uid = () => randomBytes(6).toString('hex');
const ev = (type: string, data: Record<string, unknown> = {}): EventData => ({ type, data });
const revisions = (events: RecordedEvent[]) => events.map((e) => e.revision);

/** `atomicAppendMany: false`: the adapter appends an appendMany stream by stream (EventStoreDB). */
export function eventStoreContract(name: string, open: () => Promise<{ store: EventStore; close(): Promise<void> }>, { atomicAppendMany = true } = {}) {
  describe(`EventStore contract: ${name}`, function () {
    let store: EventStore;
    let closeStore: () => Promise<void>;
    let cat: string; // this test's category: every stream of the test is `${cat}-...`
    let subscriptions: Subscription[];

    beforeEach(async () => {
      ({ store, close: closeStore } = await open());
      cat = `t${uid()}`;
      subscriptions = [];
    });
    afterEach(async () => {
      await Promise.all(subscriptions.map((s) => s.close()));
      await closeStore();
    });

    /** Subscribes and collects this test's events (a foreign event never reaches `events`). */
    const collect = (options: SubscribeOptions = {}, handler?: (e: RecordedEvent) => void | Promise<void>) => {
      const events: RecordedEvent[] = [];
      const errors: unknown[] = [];
      const subscription = store.subscribe(
        options,
        async (e) => {
          if (!e.stream.startsWith(`${cat}-`)) return;
          events.push(e);
          await handler?.(e);
        },
        (error) => errors.push(error),
      );
      subscriptions.push(subscription);
      return { events, errors, subscription };
    };

    describe('appendToStream', () => {
      it("appends to a new stream with 'no_stream', starting at revision 0", async () => {
        const id = randomUUID();
        const result = await store.appendToStream(`${cat}-a`, [{ type: 'Created', data: { n: 1 }, metadata: { by: 'me' }, id }], {
          expectedRevision: 'no_stream',
        });
        expect(result.nextRevision).to.equal(0);
        const event = nth(await store.readStream(`${cat}-a`));
        expect(event).to.include({ id, stream: `${cat}-a`, type: 'Created', revision: 0, position: result.position });
        expect(event.data).to.deep.equal({ n: 1 });
        expect(event.metadata).to.deep.equal({ by: 'me' });
        expect(event.time).to.be.closeTo(Date.now(), 60_000);
      });

      it('appends with the right numeric revision and generates ids', async () => {
        await store.appendToStream(`${cat}-a`, [ev('A'), ev('B')], { expectedRevision: 'no_stream' });
        const result = await store.appendToStream(`${cat}-a`, [ev('C')], { expectedRevision: 1 });
        expect(result.nextRevision).to.equal(2);
        const events = await store.readStream(`${cat}-a`);
        expect(events.map((e) => e.type)).to.deep.equal(['A', 'B', 'C']);
        expect(new Set(events.map((e) => e.id)).size).to.equal(3);
      });

      it('rejects a stale revision with WrongExpectedRevisionError and writes nothing', async () => {
        await store.appendToStream(`${cat}-a`, [ev('A'), ev('B')]);
        const error = await rejection(store.appendToStream(`${cat}-a`, [ev('X'), ev('Y')], { expectedRevision: 0 }));
        expect(error).to.be.instanceOf(WrongExpectedRevisionError);
        expect(error).to.include({ stream: `${cat}-a`, expected: 0, actual: 1 });
        expect(revisions(await store.readStream(`${cat}-a`))).to.deep.equal([0, 1]);
        const again = await rejection(store.appendToStream(`${cat}-a`, [ev('X')], { expectedRevision: 'no_stream' }));
        expect(again).to.be.instanceOf(WrongExpectedRevisionError);
      });

      it("fails 'stream_exists' on a missing stream and passes it on an existing one", async () => {
        const error = await rejection(store.appendToStream(`${cat}-a`, [ev('A')], { expectedRevision: 'stream_exists' }));
        expect(error).to.be.instanceOf(WrongExpectedRevisionError);
        expect(error).to.include({ actual: 'no_stream' });
        expect(await store.readStream(`${cat}-a`)).to.deep.equal([]);
        await store.appendToStream(`${cat}-a`, [ev('A')]);
        expect((await store.appendToStream(`${cat}-a`, [ev('B')], { expectedRevision: 'stream_exists' })).nextRevision).to.equal(1);
      });

      it("appends with 'any' (the default) whatever the stream's state", async () => {
        expect((await store.appendToStream(`${cat}-a`, [ev('A')], { expectedRevision: 'any' })).nextRevision).to.equal(0);
        expect((await store.appendToStream(`${cat}-a`, [ev('B')])).nextRevision).to.equal(1);
      });

      it('appends several events atomically, with consecutive revisions and increasing positions', async () => {
        const { events: seen } = collect({ category: cat });
        const result = await store.appendToStream(`${cat}-a`, [ev('A'), ev('B'), ev('C')], { expectedRevision: 'no_stream' });
        expect(result.nextRevision).to.equal(2);
        const events = await store.readStream(`${cat}-a`);
        expect(revisions(events)).to.deep.equal([0, 1, 2]);
        expectStrictlyIncreasing(events.map((e) => e.position));
        expect(events[2]!.position).to.equal(result.position);
        await waitFor(() => seen.length === 3, 'the batch to be delivered');
        expect(seen.map((e) => e.position)).to.deep.equal(events.map((e) => e.position));
      });

      it('treats an empty append as a no-op returning the current revision', async () => {
        expect((await store.appendToStream(`${cat}-a`, [])).nextRevision).to.equal(-1);
        await store.appendToStream(`${cat}-a`, [ev('A'), ev('B')]);
        expect((await store.appendToStream(`${cat}-a`, [], { expectedRevision: 1 })).nextRevision).to.equal(1);
        expect(await store.readStream(`${cat}-a`)).to.have.length(2);
      });

      it('lets exactly one of several concurrent appends with the same expected revision win', async () => {
        await store.appendToStream(`${cat}-a`, [ev('Start')]);
        for (let round = 0; round < 5; round++) {
          const attempts = await Promise.allSettled(
            Array.from({ length: 6 }, (_, i) =>
              store.appendToStream(`${cat}-a`, [ev('Try', { round, i })], { expectedRevision: round }),
            ),
          );
          const won = attempts.filter((a) => a.status === 'fulfilled');
          expect(won, `round ${round}`).to.have.length(1);
          for (const a of attempts) if (a.status === 'rejected') expect(a.reason).to.be.instanceOf(WrongExpectedRevisionError);
        }
        expect(revisions(await store.readStream(`${cat}-a`))).to.deep.equal([0, 1, 2, 3, 4, 5]);
      });

      it('gives strictly increasing positions across streams', async () => {
        const positions: bigint[] = [];
        for (let i = 0; i < 12; i++) positions.push((await store.appendToStream(`${cat}-${i % 3}`, [ev('E', { i })])).position);
        expectStrictlyIncreasing(positions);
        const read = (await Promise.all([0, 1, 2].map((s) => store.readStream(`${cat}-${s}`)))).flat();
        expect(read.map((e) => e.position).sort((a, b) => (a < b ? -1 : 1))).to.deep.equal(positions);
      });
    });

    appendManyContract({ store: () => store, cat: () => cat, keep: (s) => subscriptions.push(s) }, { atomic: atomicAppendMany });

    describe('readStream', () => {
      beforeEach(async () => {
        await store.appendToStream(`${cat}-r`, Array.from({ length: 10 }, (_, i) => ev('E', { i })));
      });

      it('reads forwards and backwards', async () => {
        expect(revisions(await store.readStream(`${cat}-r`))).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        expect(revisions(await store.readStream(`${cat}-r`, { direction: 'backwards' }))).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        expect((await store.readStream(`${cat}-r`)).map((e) => e.data.i)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      });

      it('pages with fromRevision and maxCount', async () => {
        expect(revisions(await store.readStream(`${cat}-r`, { fromRevision: 3, maxCount: 4 }))).to.deep.equal([3, 4, 5, 6]);
        expect(revisions(await store.readStream(`${cat}-r`, { direction: 'backwards', fromRevision: 6, maxCount: 3 }))).to.deep.equal([6, 5, 4]);
        expect(revisions(await store.readStream(`${cat}-r`, { direction: 'backwards', maxCount: 2 }))).to.deep.equal([9, 8]);
        const all: RecordedEvent[] = [];
        for (let from = 0; ; ) {
          const page = await store.readStream(`${cat}-r`, { fromRevision: from, maxCount: 3 });
          all.push(...page);
          if (page.length < 3) break;
          from = page[page.length - 1]!.revision + 1;
        }
        expect(revisions(all)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        expect(await store.readStream(`${cat}-r`, { fromRevision: 10 })).to.deep.equal([]);
      });

      it('reads a missing stream as []', async () => {
        expect(await store.readStream(`${cat}-missing`)).to.deep.equal([]);
        expect(await store.readStream(`${cat}-missing`, { direction: 'backwards', maxCount: 1 })).to.deep.equal([]);
      });
    });

    subscribeContract({ current: () => ({ store, cat, subscriptions }), collect });

    describe('setStreamMaxCount', () => {
      it('keeps only the newest n events readable', async () => {
        await store.appendToStream(`${cat}-a`, Array.from({ length: 5 }, (_, i) => ev('E', { i })));
        await store.setStreamMaxCount(`${cat}-a`, 3);
        expect(revisions(await store.readStream(`${cat}-a`))).to.deep.equal([2, 3, 4]);
        await store.appendToStream(`${cat}-a`, [ev('E'), ev('E')], { expectedRevision: 4 });
        expect(revisions(await store.readStream(`${cat}-a`))).to.deep.equal([4, 5, 6]);
        expect(revisions(await store.readStream(`${cat}-a`, { direction: 'backwards' }))).to.deep.equal([6, 5, 4]);
      });

      it('applies to a stream created after it was set', async () => {
        await store.setStreamMaxCount(`${cat}-b`, 2);
        await store.appendToStream(`${cat}-b`, [ev('E'), ev('E'), ev('E')]);
        expect(revisions(await store.readStream(`${cat}-b`))).to.deep.equal([1, 2]);
      });
    });
  });
}
