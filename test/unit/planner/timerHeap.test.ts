import { expect } from 'chai';
import { TimerHeap } from '../../../services/planner/timerHeap.ts';
import { random } from '../../support/random.ts';

type E = { at: number; job: number; version: number };

/** A heap whose entries are current while their job's version matches, as in the planner. */
function heapWithVersions() {
  const versions = new Map<number, number>();
  const heap = new TimerHeap<E>((e) => versions.get(e.job) === e.version);
  return { heap, versions };
}

describe('planner: timer heap', () => {
  it('pops due entries in time order and stops at the first one not due', () => {
    const { heap, versions } = heapWithVersions();
    const rnd = random(7);
    const ats: number[] = [];
    for (let job = 0; job < 2000; job++) {
      versions.set(job, 1);
      const at = Math.floor(rnd() * 10_000);
      ats.push(at);
      heap.push({ at, job, version: 1 });
    }
    const popped: number[] = [];
    for (let e = heap.popDue(5000); e; e = heap.popDue(5000)) popped.push(e.at);
    expect(popped).to.deep.equal(ats.filter((a) => a <= 5000).sort((a, b) => a - b));
    expect(heap.peek()!.at).to.be.greaterThan(5000);
  });

  it('lazy invalidation: an entry of an older job version is skipped, never returned', () => {
    const { heap, versions } = heapWithVersions();
    versions.set(1, 1).set(2, 1);
    heap.push({ at: 10, job: 1, version: 1 });
    heap.push({ at: 20, job: 2, version: 1 });
    versions.set(1, 2); // job 1 re-planned
    heap.invalidated();
    heap.push({ at: 30, job: 1, version: 2 });
    expect(heap.popDue(100)).to.deep.equal({ at: 20, job: 2, version: 1 });
    expect(heap.popDue(100)).to.deep.equal({ at: 30, job: 1, version: 2 });
    expect(heap.popDue(100)).to.equal(undefined);
  });

  it('compacts once stale entries outnumber live ones, so memory follows the live count', () => {
    const { heap, versions } = heapWithVersions();
    for (let job = 0; job < 10_000; job++) versions.set(job, 1), heap.push({ at: job, job, version: 1 });
    for (let round = 2; round <= 5; round++) {
      for (let job = 0; job < 10_000; job++) {
        versions.set(job, round);
        heap.invalidated();
        heap.push({ at: job + round, job, version: round });
      }
    }
    expect(heap.size).to.be.below(25_000);
    let n = 0;
    for (let e = heap.popDue(Infinity); e; e = heap.popDue(Infinity)) expect(e.version).to.equal(5), n++;
    expect(n).to.equal(10_000);
  });
});
