/**
 * What the SQLite store's appended tail (shared/eventStore/appendedTail.ts) must never change: a
 * subscription hands out exactly what a read of the file gives, whoever wrote to the file and
 * whatever the store deleted since. Each check compares a subscription of the store that appended
 * (served from memory where it can) with one of a store object opened afterwards (from the file).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStore, RecordedEvent, SubscribeOptions } from '../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';
import { waitFor } from '../support/waitFor.ts';

/** Every event `store` hands a new subscription until it has caught up. */
async function delivered(store: EventStore, options: SubscribeOptions = {}): Promise<string[]> {
  const seen: RecordedEvent[] = [];
  const subscription = store.subscribe(options, (e) => void seen.push(e));
  await subscription.caughtUp;
  await subscription.close();
  return seen.map((e) => `${e.position}:${e.stream}@${e.revision}`);
}

describe('SQLite event store: subscriptions read back appends from memory, exactly as from the file', function () {
  this.timeout(30_000);
  let dir: string;
  let stores: EventStore[];
  const open = (pollIntervalMs?: number) => {
    const store = openSqliteEventStore(join(dir, 'events.db'), { pollIntervalMs });
    stores.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tock-tail-'));
    stores = [];
  });
  afterEach(async () => {
    for (const store of stores) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds another connection's events after its own: a category subscriber misses none", async () => {
    const mine = open(10);
    const other = open();
    const seen: string[] = [];
    const subscription = mine.subscribe({ category: 'y' }, (e) => void seen.push(e.stream));
    await subscription.caughtUp;
    await mine.appendToStream('z-1', [{ type: 'E', data: {} }]);
    await other.appendToStream('y-1', [{ type: 'E', data: {} }]);
    await waitFor(() => seen.length === 1, 'the other connection’s y event');
    await mine.appendToStream('y-2', [{ type: 'E', data: {} }]);
    await waitFor(() => seen.length === 2, 'its own y event after it');
    expect(seen).to.deep.equal(['y-1', 'y-2']);
    await subscription.close();
  });

  it('hands out the same events as the file from any checkpoint, with writers interleaving', async () => {
    const mine = open();
    const other = open();
    for (let round = 0; round < 12; round++) {
      const writer = round % 4 === 3 ? other : mine;
      await writer.appendMany([
        { stream: `a-${round % 3}`, events: [{ type: 'E', data: { round } }] },
        { stream: `b-${round % 2}`, events: [{ type: 'E', data: { round } }, { type: 'E', data: { round } }] },
      ]);
    }
    const reader = open();
    for (const from of [undefined, 1n, 5n, 17n, 30n, 36n, 99n]) {
      for (const category of [undefined, 'a', 'b']) {
        const options = { fromPosition: from, category };
        expect(await delivered(mine, options), JSON.stringify({ from: String(from), category })).to.deep.equal(await delivered(reader, options));
      }
    }
  });

  it("never hands out the events a stream's max count deleted, as a read of the file does not", async () => {
    const mine = open();
    await mine.setStreamMaxCount('ids-job', 2);
    for (let i = 0; i < 5; i++) await mine.appendToStream('ids-job', [{ type: 'IdsAllocated', data: { i } }]);
    await mine.appendToStream('job-1', [{ type: 'E', data: {} }]);
    const fromFile = await delivered(open());
    expect(fromFile).to.have.length(3);
    expect(await delivered(mine)).to.deep.equal(fromFile);
  });
});
