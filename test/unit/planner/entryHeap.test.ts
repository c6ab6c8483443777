import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EntryHeap } from '../../../services/planner/entryHeap.ts';
import { DELAYED, QUEUED, TICK, type Entry } from '../../../services/planner/firing.ts';
import { random } from '../../support/random.ts';

const LEAD = 250;

/** The planner's heap, its entries current while their job's version matches (a queued run while its id is listed). */
function heapWithVersions() {
  const versions = new Map<number, number>();
  const queued = new Set<string>();
  const current = (e: Entry) => (e.kind === QUEUED ? queued.has(e.runId!) : versions.get(e.jobId) === e.version);
  const heap = new EntryHeap((jobId, version) => versions.get(jobId) === version, current, LEAD);
  return { heap, versions, queued };
}

const tick = (jobId: number, version: number, due: number): Entry => ({ at: due - LEAD, due, jobId, version, kind: TICK, occurrence: due, runId: null });

describe('planner: entry heap (ticks in typed arrays, other entries as objects)', () => {
  it('gives back each tick as it was pushed, with its due instant and occurrence, earliest first across both kinds', () => {
    const { heap, versions, queued } = heapWithVersions();
    const rnd = random(11);
    const pushed: Entry[] = [];
    for (let job = 1; job <= 3000; job++) {
      versions.set(job, 1 + (job % 3));
      const due = 1_700_000_000_000 + Math.floor(rnd() * 100_000);
      const e: Entry =
        job % 10 === 0
          ? { at: due - LEAD, due, jobId: job, version: versions.get(job)!, kind: DELAYED, occurrence: due - 7000, runId: null }
          : job % 10 === 5
            ? { at: due - LEAD, due, jobId: job, version: 0, kind: QUEUED, occurrence: due, runId: `${job}:q` }
            : tick(job, versions.get(job)!, due);
      if (e.runId) queued.add(e.runId);
      pushed.push(e);
      heap.push(e);
    }
    expect(heap.size).to.equal(3000);
    const popped: Entry[] = [];
    for (let e = heap.popDue(Infinity); e; e = heap.popDue(Infinity)) popped.push(e);
    expect(popped.map((e) => e.at)).to.deep.equal(pushed.map((e) => e.at).sort((a, b) => a - b));
    const byJob = new Map(popped.map((e) => [e.jobId, e]));
    for (const e of pushed) expect(byJob.get(e.jobId)).to.deep.equal(e);
    expect(heap.size).to.equal(0);
  });

  it('stops at the first entry not due, and says when the next one fires', () => {
    const { heap, versions } = heapWithVersions();
    versions.set(1, 1).set(2, 1);
    heap.push(tick(1, 1, 5000));
    heap.push({ at: 3000, due: 3000, jobId: 2, version: 1, kind: DELAYED, occurrence: 2000, runId: null });
    expect(heap.headAt()).to.equal(3000);
    expect(heap.popDue(2999)).to.equal(undefined);
    expect(heap.popDue(3000)!.kind).to.equal(DELAYED);
    expect(heap.headAt()).to.equal(5000 - LEAD);
    expect(heap.popDue(5000 - LEAD - 1)).to.equal(undefined);
    expect(heap.popDue(5000 - LEAD)).to.deep.equal(tick(1, 1, 5000));
    expect(heap.headAt()).to.equal(undefined);
  });

  it('skips a tick of an older job version, never returning it', () => {
    const { heap, versions } = heapWithVersions();
    versions.set(1, 1).set(2, 1);
    heap.push(tick(1, 1, 1000));
    heap.push(tick(2, 1, 2000));
    versions.set(1, 2);
    heap.invalidated();
    heap.push(tick(1, 2, 3000));
    expect(heap.headAt()).to.equal(2000 - LEAD);
    expect(heap.popDue(Infinity)).to.deep.equal(tick(2, 1, 2000));
    expect(heap.popDue(Infinity)).to.deep.equal(tick(1, 2, 3000));
    expect(heap.popDue(Infinity)).to.equal(undefined);
  });

  it('compacts once stale ticks outnumber live ones, so memory follows the live count', () => {
    const { heap, versions } = heapWithVersions();
    for (let job = 0; job < 10_000; job++) versions.set(job, 1), heap.push(tick(job, 1, job));
    for (let round = 2; round <= 5; round++) {
      for (let job = 0; job < 10_000; job++) {
        versions.set(job, round);
        heap.invalidated();
        heap.push(tick(job, round, job + round));
      }
    }
    expect(heap.size).to.be.below(25_000);
    let n = 0;
    let last = -Infinity;
    for (let e = heap.popDue(Infinity); e; e = heap.popDue(Infinity)) {
      expect(e.version).to.equal(5);
      expect(e.at).to.be.at.least(last);
      last = e.at;
      n++;
    }
    expect(n).to.equal(10_000);
  });

  it('holds a tick in under 40 bytes (an object entry took about 130), so a million jobs plan in 40 MB of timers at most', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const used = () => (gc(), gc(), process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers);
    const { heap, versions } = heapWithVersions();
    const before = used();
    for (let job = 0; job < 100_000; job++) heap.push(tick(job, 1, 1_800_000_000_000 + job * 997));
    const perTick = (used() - before) / 100_000;
    versions.set(0, 1);
    expect(heap.headAt()).to.equal(1_800_000_000_000 - LEAD);
    expect(perTick).to.be.below(40);
  });
});
