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
import { waitFor } from '../support/waitFor.ts';
import { rejection } from '../support/rejection.ts';

const uid = () => randomBytes(6).toString('hex');
const ev = (type: string, data: Record<string, unknown> = {}): EventData => ({ type, data });
const revisions = (events: RecordedEvent[]) => events.map((e) => e.revision);

function expectStrictlyIncreasing(positions: bigint[]) {
  for (const [i, position] of positions.entries()) {
    const previous = positions[i - 1];
    if (previous === undefined) continue;
    expect(position > previous, `position ${position} after ${previous}`).to.equal(true);
  }
}

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

    describe('subscribe', () => {
      it('delivers stored events, then live ones, in position order', async () => {
        await store.appendToStream(`${cat}-a`, [ev('A0'), ev('A1')]);
        await store.appendToStream(`${cat}-b`, [ev('B0')]);
        const { events, subscription } = collect();
        await subscription.caughtUp;
        expect(events.map((e) => e.type)).to.deep.equal(['A0', 'A1', 'B0']);
        await store.appendToStream(`${cat}-b`, [ev('B1')]);
        await store.appendToStream(`${cat}-a`, [ev('A2'), ev('A3')]);
        await waitFor(() => events.length === 6, 'live events');
        expect(events.map((e) => e.type)).to.deep.equal(['A0', 'A1', 'B0', 'B1', 'A2', 'A3']);
        expectStrictlyIncreasing(events.map((e) => e.position));
      });

      it('delivers only the requested category', async () => {
        const other = `u${uid()}`;
        await store.appendToStream(`${cat}-a`, [ev('Mine')]);
        await store.appendToStream(`${other}-a`, [ev('Other')]);
        await store.appendToStream(`${cat}x-a`, [ev('LookAlike')]); // same prefix, another category
        const seen: RecordedEvent[] = [];
        subscriptions.push(store.subscribe({ category: cat }, (e) => void seen.push(e)));
        await subscriptions[0]!.caughtUp;
        await store.appendToStream(`${other}-b`, [ev('Other')]);
        await store.appendToStream(`${cat}-b`, [ev('Mine')]);
        await waitFor(() => seen.length >= 2, 'the live event of the category');
        expect(seen.map((e) => e.stream)).to.deep.equal([`${cat}-a`, `${cat}-b`]);
      });

      it('resumes after a checkpoint with exactly the later events', async () => {
        await store.appendToStream(`${cat}-a`, Array.from({ length: 10 }, (_, i) => ev('E', { i })));
        const stored = await store.readStream(`${cat}-a`);
        const { events, subscription } = collect({ fromPosition: stored[3]!.position });
        await subscription.caughtUp;
        expect(revisions(events)).to.deep.equal([4, 5, 6, 7, 8, 9]);
        const { events: fromHead, subscription: atHead } = collect({ fromPosition: stored[9]!.position });
        await atHead.caughtUp;
        await store.appendToStream(`${cat}-a`, [ev('Live')]);
        await waitFor(() => fromHead.length === 1 && events.length === 7, 'the live event');
        expect(revisions(fromHead)).to.deep.equal([10]);
      });

      it('resumes from a checkpoint while appends continue: no duplicate, no gap', async () => {
        const total = 100;
        let appended = 0;
        const appending = (async () => {
          for (let i = 0; i < total; i++, appended++) {
            await store.appendToStream(`${cat}-a`, [ev('E', { i })], { expectedRevision: i === 0 ? 'no_stream' : i - 1 });
            await new Promise((resolve) => setImmediate(resolve)); // let the subscriptions interleave
          }
        })();
        let reached!: () => void;
        const fifteen = new Promise<void>((resolve) => (reached = resolve));
        const first = collect({}, (e) => {
          if (e.revision === 14) reached();
        });
        await fifteen;
        await first.subscription.close();
        const handledByFirst = first.events.length;
        const checkpoint = first.events[handledByFirst - 1]!.position;
        const second = collect({ fromPosition: checkpoint });
        expect(appended, 'appends were still going on at the resume').to.be.below(total);
        await appending;
        const last = () => (second.events.at(-1) ?? first.events.at(-1))?.revision;
        await waitFor(() => last() === total - 1, 'the subscriptions to reach the end');
        expect(handledByFirst, 'the first subscription was closed mid-way').to.be.below(total);
        expect(first.events).to.have.length(handledByFirst); // nothing after close
        const all = [...first.events, ...second.events];
        expect(revisions(all)).to.deep.equal(Array.from({ length: total }, (_, i) => i));
        expectStrictlyIncreasing(all.map((e) => e.position));
      });

      it('resolves caughtUp with nothing to deliver, and on a position past everything', async () => {
        await collect({ category: `${cat}none` }).subscription.caughtUp;
        const { position } = await store.appendToStream(`${cat}-a`, [ev('A')]);
        const { events, subscription } = collect({ fromPosition: position });
        await subscription.caughtUp;
        expect(events).to.deep.equal([]);
      });

      it('awaits the handler, one event at a time', async () => {
        await store.appendToStream(`${cat}-a`, Array.from({ length: 5 }, () => ev('E')));
        let running = 0;
        let most = 0;
        const { events } = collect({ category: cat }, async () => {
          most = Math.max(most, ++running);
          await new Promise((resolve) => setImmediate(resolve));
          running--;
        });
        await store.appendToStream(`${cat}-a`, Array.from({ length: 5 }, () => ev('E')));
        await waitFor(() => events.length === 10 && running === 0, 'all handlers');
        expect(most).to.equal(1);
        expect(revisions(events)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      });

      it('stops delivering on close', async () => {
        const closing = collect({ category: cat });
        const staying = collect({ category: cat });
        await store.appendToStream(`${cat}-a`, [ev('Before')]);
        await waitFor(() => closing.events.length === 1, 'the first event');
        await closing.subscription.close();
        await store.appendToStream(`${cat}-a`, [ev('After')]);
        await waitFor(() => staying.events.length === 2, 'the other subscription to see the later event');
        expect(closing.events.map((e) => e.type)).to.deep.equal(['Before']);
      });

      it('stops and reports when the handler throws', async () => {
        await store.appendToStream(`${cat}-a`, [ev('A'), ev('B'), ev('C')]);
        const boom = new Error('boom');
        const { events, errors } = collect({ category: cat }, (e) => {
          if (e.type === 'B') throw boom;
        });
        await waitFor(() => errors.length === 1, 'onError');
        expect(errors[0]).to.equal(boom);
        await store.appendToStream(`${cat}-a`, [ev('D')]);
        const witness = collect({ category: cat });
        await waitFor(() => witness.events.length === 4, 'a fresh subscription to see everything');
        expect(events.map((e) => e.type)).to.deep.equal(['A', 'B']);
      });
    });

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
