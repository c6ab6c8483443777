import { expect } from 'chai';
import { slicedQueue } from '../../../shared/timeSlice.ts';

describe('work taken in slices', () => {
  it('runs at most a slice per turn, in order, and answers each as its work does', async () => {
    const turns: (() => void)[] = [];
    const slices = slicedQueue(2, (fn) => turns.push(fn));
    const started: number[] = [];
    const answers = [1, 2, 3, 4, 5].map((n) => slices.run(async () => (started.push(n), n * 10)));
    expect(started, 'nothing before its turn').to.deep.equal([]);
    turns.shift()!();
    expect(started).to.deep.equal([1, 2]);
    turns.shift()!();
    turns.shift()!();
    expect(started).to.deep.equal([1, 2, 3, 4, 5]);
    expect(turns, 'no turn asked for once the queue is empty').to.have.length(0);
    expect(await Promise.all(answers)).to.deep.equal([10, 20, 30, 40, 50]);
  });

  it('passes a failure on to the caller and goes on with the rest', async () => {
    const slices = slicedQueue(1);
    const failed = slices.run(() => Promise.reject(new Error('boom')));
    const next = slices.run(async () => 'next');
    expect(await failed.then(() => 'resolved', (e: Error) => e.message)).to.equal('boom');
    expect(await next).to.equal('next');
  });

  it('lets a timer due meanwhile fire between two slices', async () => {
    const slices = slicedQueue(1);
    const order: string[] = [];
    const busy = (name: string) => async () => {
      const until = Date.now() + 5;
      while (Date.now() < until); // a slice that holds the thread
      order.push(name);
    };
    const work = [slices.run(busy('a')), slices.run(busy('b')), slices.run(busy('c'))];
    setTimeout(() => order.push('timer'), 0);
    await Promise.all(work);
    expect(order.indexOf('timer'), 'the timer is not last').to.be.below(3);
  });
});
