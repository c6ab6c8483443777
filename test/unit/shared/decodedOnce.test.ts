import { expect } from 'chai';
import type { RecordedEvent } from '../../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { decodedOnce } from '../../../shared/eventStore/sqliteSubscription.ts';

describe('decodedOnce: an event decoded once for the subscriptions of one store', () => {
  const row = (position: number) => ({ position, data: `{"n":${position}}` });
  const counting = () => {
    const decoded: number[] = [];
    const decode = (r: ReturnType<typeof row>) => (decoded.push(r.position), { position: BigInt(r.position), data: JSON.parse(r.data) }) as unknown as RecordedEvent;
    return { decoded, decode };
  };

  it('hands every reader of a position the one event decoded for it', () => {
    const { decoded, decode } = counting();
    const read = decodedOnce(decode, 8);
    const first = [1, 2, 3].map((p) => read(row(p)));
    const second = [1, 2, 3].map((p) => read(row(p)));
    expect(decoded).to.deep.equal([1, 2, 3]);
    second.forEach((event, i) => expect(event).to.equal(first[i]));
  });

  it('decodes again for a reader further behind than it keeps, and gives it the right event', () => {
    const { decoded, decode } = counting();
    const read = decodedOnce(decode, 4);
    for (let p = 1; p <= 6; p++) read(row(p));
    // Positions 1 and 2 share slots with 5 and 6: decoded anew, not taken for them.
    expect((read(row(1)).data as { n: number }).n).to.equal(1);
    expect((read(row(6)).data as { n: number }).n).to.equal(6);
    expect(decoded).to.deep.equal([1, 2, 3, 4, 5, 6, 1]);
  });

  it('is what a SQLite store subscription hands its handler: two subscriptions get the same event', async () => {
    const store = openSqliteEventStore(':memory:');
    try {
      await store.appendToStream('cronjob-1', [{ type: 'JobEnabled', data: { at: 1 } }]);
      const seen: RecordedEvent[][] = [[], []];
      const subscriptions = seen.map((list) => store.subscribe({}, (event) => void list.push(event)));
      await Promise.all(subscriptions.map((s) => s.caughtUp));
      await Promise.all(subscriptions.map((s) => s.close()));
      expect(seen[0]).to.have.length(1);
      expect(seen[1]![0]).to.equal(seen[0]![0]);
    } finally {
      await store.close();
    }
  });
});
