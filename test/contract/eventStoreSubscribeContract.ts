/**
 * The subscribe part of the EventStore contract (eventStoreContract.ts runs it for each adapter):
 * stored events then live ones in position order, categories, resuming after a checkpoint, one
 * event at a time through the handler, close, and a throwing handler.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { EventData, EventStore, RecordedEvent, SubscribeOptions, Subscription } from '../../shared/eventStore/eventStore.ts';
import { expectStrictlyIncreasing } from '../support/strictlyIncreasing.ts';
import { waitFor } from '../support/waitFor.ts';

const uid = () => randomBytes(6).toString('hex');
const ev = (type: string, data: Record<string, unknown> = {}): EventData => ({ type, data });
const revisions = (events: RecordedEvent[]) => events.map((e) => e.revision);

export interface SubscribeContext {
  /** This test's store, its category (its streams are `${cat}-...`) and the subscriptions closed after it. */
  current(): { store: EventStore; cat: string; subscriptions: Subscription[] };
  /** Subscribes and collects this test's events (a foreign event never reaches `events`). */
  collect(options?: SubscribeOptions, handler?: (e: RecordedEvent) => void | Promise<void>): { events: RecordedEvent[]; errors: unknown[]; subscription: Subscription };
}

export function subscribeContract({ current, collect }: SubscribeContext) {
  describe('subscribe', () => {
    let store: EventStore;
    let cat: string;
    let subscriptions: Subscription[];
    beforeEach(() => {
      ({ store, cat, subscriptions } = current());
    });

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
}
