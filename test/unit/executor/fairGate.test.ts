import { expect } from 'chai';
import { createFairGate, type Release } from '../../../services/executor/fairGate.ts';

/** A gate whose admissions are recorded by name, in the order they happen. */
function recordedGate(perAccount: number, maxWaiting: number) {
  const gate = createFairGate({ perAccount, maxWaiting });
  const admitted: string[] = [];
  const releases = new Map<string, Release>();
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    gate,
    admitted,
    settle,
    enter(accountId: number, name: string) {
      return gate.enter(accountId).then((release) => {
        if (typeof release === 'function') {
          admitted.push(name);
          releases.set(name, release);
        }
        return release;
      });
    },
    release: (name: string) => releases.get(name)!(),
  };
}

describe("each account's share of an executor's calls", () => {
  it('admits at once, in the order runs come, while an account has free slots', async () => {
    const g = recordedGate(0, 100);
    for (const [account, name] of [[1, 'a1'], [2, 'b1'], [1, 'a2'], [3, 'c1']] as const) void g.enter(account, name);
    await g.settle();
    expect(g.admitted).to.deep.equal(['a1', 'b1', 'a2', 'c1']);
  });

  it('keeps each account to its calls in flight; a release hands the slot to that account’s next run', async () => {
    const g = recordedGate(2, 100);
    for (let i = 1; i <= 4; i++) void g.enter(1, `a${i}`);
    void g.enter(2, 'b1');
    await g.settle();
    expect(g.admitted).to.deep.equal(['a1', 'a2', 'b1']);
    expect(g.gate.load(1)).to.deep.equal({ inFlight: 2, waiting: 2 });
    void g.enter(2, 'b2');
    await g.settle();
    expect(g.admitted.at(-1), 'the other account is not held up by the full one').to.equal('b2');
    g.release('a1');
    g.release('a1'); // twice is once
    await g.settle();
    expect(g.admitted.at(-1)).to.equal('a3');
    expect(g.gate.load(1)).to.deep.equal({ inFlight: 2, waiting: 1 });
  });

  it("refuses an account's run when it is full and its queue is long, and only that account's", async () => {
    const g = recordedGate(1, 2);
    for (let i = 1; i <= 3; i++) void g.enter(1, `a${i}`);
    await g.settle();
    expect(g.gate.load(1)).to.deep.equal({ inFlight: 1, waiting: 2 });
    expect(await g.gate.enter(1)).to.equal('full');
    expect(await g.enter(2, 'b1')).to.be.a('function');
  });

  it('hands every waiting run back when closed, and refuses new ones', async () => {
    const g = recordedGate(1, 10);
    const answers = [g.enter(1, 'a1'), g.enter(1, 'a2'), g.enter(2, 'b1')];
    await g.settle();
    g.gate.close();
    const [a1, a2, b1] = await Promise.all(answers);
    expect(typeof a1).to.equal('function');
    expect(a2).to.equal('closed');
    expect(typeof b1).to.equal('function');
    expect(await g.gate.enter(3)).to.equal('closed');
  });

  it('forgets an account once it has nothing in flight or waiting', async () => {
    const g = recordedGate(1, 10);
    void g.enter(7, 'x');
    void g.enter(7, 'y');
    await g.settle();
    g.release('x');
    await g.settle();
    expect(g.gate.load(7)).to.deep.equal({ inFlight: 1, waiting: 0 });
    g.release('y');
    expect(g.gate.load(7)).to.deep.equal({ inFlight: 0, waiting: 0 });
  });

  it('lets a test call in only on a free slot, never in the line; its release frees the slot for the next run', async () => {
    const g = recordedGate(1, 100);
    const test = g.gate.tryEnter(1);
    expect(test).to.be.a('function');
    expect(g.gate.tryEnter(1), 'a second test while the slot is taken').to.equal(null);
    void g.enter(1, 'a1');
    await g.settle();
    expect(g.admitted).to.deep.equal([]);
    expect(g.gate.load(1)).to.deep.equal({ inFlight: 1, waiting: 1 });
    test!();
    await g.settle();
    expect(g.admitted).to.deep.equal(['a1']);
    g.gate.close();
    expect(g.gate.tryEnter(2), 'closed').to.equal(null);
  });
});
