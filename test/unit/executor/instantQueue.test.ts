import { expect } from 'chai';
import { FakeClock, type Clock } from '../../../shared/clock.ts';
import { createInstantQueue, roundRobin } from '../../../services/executor/instantQueue.ts';

const T0 = Date.UTC(2030, 0, 1);

/** A queue on a fake clock whose slices run when the test says; it records who left, in order. */
function recordedQueue(slice = 1000) {
  const clock = new FakeClock(T0);
  let timers = 0;
  const counting: Clock = { now: () => clock.now(), setTimer: (at, fn) => (timers++, clock.setTimer(at, fn)) };
  const deferred: (() => void)[] = [];
  const queue = createInstantQueue({ clock: counting, slice, defer: (fn) => deferred.push(fn) });
  const left: string[] = [];
  const answers: Promise<boolean>[] = [];
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    clock,
    queue,
    left,
    answers,
    timers: () => timers,
    wait(due: number, accountId: number, name: string) {
      const answer = queue.wait(due, accountId).then((onTime) => (left.push(onTime ? name : `${name}:closed`), onTime));
      answers.push(answer);
      return answer;
    },
    /** Runs the next deferred slice. */
    async next() {
      deferred.shift()?.();
      await settle();
    },
    settle,
  };
}

describe('runs waiting for their instant', () => {
  it("leave round-robin across accounts, so one account's crowd does not go first", async () => {
    const q = recordedQueue();
    for (let i = 1; i <= 5; i++) void q.wait(T0 + 1000, 1, `a${i}`);
    void q.wait(T0 + 1000, 2, 'b1');
    void q.wait(T0 + 1000, 3, 'c1');
    void q.wait(T0 + 1000, 2, 'b2');
    await q.clock.advance(999);
    expect(q.left, 'nobody before the instant').to.deep.equal([]);
    await q.clock.advance(1);
    expect(q.left).to.deep.equal(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4', 'a5']);
  });

  it('arm one timer per instant, not one per run', async () => {
    const q = recordedQueue();
    for (let i = 0; i < 100; i++) void q.wait(T0 + 1000 + (i % 2) * 1000, i % 7, `r${i}`);
    expect(q.timers()).to.equal(2);
    expect(q.queue.waiting(T0 + 1000, 0)).to.equal(8);
    await q.clock.advance(2000);
    expect(q.left).to.have.length(100);
  });

  it('leave in slices a macrotask apart, each twice the last, the first holding every account', async () => {
    const q = recordedQueue(2);
    for (let i = 1; i <= 8; i++) void q.wait(T0 + 1000, 1, `a${i}`);
    void q.wait(T0 + 1000, 2, 'b1');
    await q.clock.advance(1000);
    expect(q.left).to.deep.equal(['a1', 'b1']);
    await q.next();
    expect(q.left).to.deep.equal(['a1', 'b1', 'a2', 'a3', 'a4', 'a5']);
    await q.next();
    expect(q.left).to.deep.equal(['a1', 'b1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8']);
  });

  it('let runs whose instant has passed leave on the next turn, round-robin among themselves', async () => {
    const q = recordedQueue();
    void q.wait(T0 - 5000, 1, 'a1');
    void q.wait(T0, 1, 'a2');
    void q.wait(T0 - 1, 2, 'b1');
    expect(q.timers(), 'no timer for the past').to.equal(0);
    await q.settle();
    expect(q.left).to.deep.equal([]);
    await q.next();
    expect(q.left).to.deep.equal(['a1', 'b1', 'a2']);
  });

  it('answer false to every waiting run when closed, even those of a slice not yet out, and to any run after', async () => {
    const q = recordedQueue(1);
    void q.wait(T0 + 1000, 1, 'a1');
    void q.wait(T0 + 1000, 1, 'a2');
    void q.wait(T0 + 5000, 2, 'b1');
    await q.clock.advance(1000);
    q.queue.close();
    await q.next();
    expect(await q.wait(T0 + 9000, 3, 'c1')).to.equal(false);
    expect(q.left.sort()).to.deep.equal(['a1', 'a2:closed', 'b1:closed', 'c1:closed']);
    await q.clock.advance(10_000);
    expect(q.left).to.have.length(4);
  });
});

describe('round-robin order', () => {
  it('takes one of each line per round, lines in their first order', () => {
    const lines = new Map([[5, ['a1', 'a2', 'a3']], [1, ['b1']], [9, ['c1', 'c2']]]);
    expect(roundRobin(lines)).to.deep.equal(['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
    expect(roundRobin(new Map())).to.deep.equal([]);
  });
});
