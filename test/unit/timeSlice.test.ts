import { expect } from 'chai';
import { slicedAll } from '../../shared/timeSlice.ts';

describe('slicedAll', () => {
  it('keeps at most `concurrency` tasks unsettled and answers in order, like Promise.all', async () => {
    let running = 0;
    let most = 0;
    const results = await slicedAll(
      20,
      async (i) => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 1 + (i % 3)));
        running--;
        return i * 2;
      },
      4,
    );
    expect(most).to.equal(4);
    expect(results).to.deep.equal(Array.from({ length: 20 }, (_, i) => i * 2));
  });

  it('rejects as Promise.all does, with no unhandled rejection left behind', async () => {
    const error = await slicedAll(5, async (i) => {
      if (i === 2) throw new Error('third');
      return i;
    }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(error).to.equal('third');
  });
});
