import { expect } from 'chai';
import { createFairGate, type Release } from '../../../services/executor/fairGate.ts';

/** A gate whose admissions run when the test says, so the order is observable. */
function manualGate(perAccount: number, maxWaiting: number) {
  const pending: (() => void)[] = [];
  const gate = createFairGate({ perAccount, maxWaiting, defer: (fn) => pending.push(fn) });
  const admitted: string[] = [];
  const releases = new Map<string, Release>();
  return {
    gate,
    admitted,
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
    async turn() {
      while (pending.length) pending.shift()!();
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('the fair gate between accounts', () => {
  it("admits runs due together round-robin, so one account's crowd does not go first", async () => {
    const g = manualGate(0, 100);
    for (let i = 1; i <= 5; i++) void g.enter(1, `a${i}`);
    void g.enter(2, 'b1');
    void g.enter(3, 'c1');
    await g.turn();
    expect(g.admitted).to.deep.equal(['a1', 'b1', 'c1', 'a2', 'a3', 'a4', 'a5']);
  });

  it('keeps each account to its calls in flight; a release lets the next of that account in', async () => {
    const g = manualGate(2, 100);
    for (let i = 1; i <= 4; i++) void g.enter(1, `a${i}`);
    void g.enter(2, 'b1');
    await g.turn();
    expect(g.admitted).to.deep.equal(['a1', 'b1', 'a2']);
    expect(g.gate.load(1)).to.deep.equal({ inFlight: 2, waiting: 2 });
    void g.enter(2, 'b2');
    await g.turn();
    expect(g.admitted.at(-1), 'the other account is not held up by the full one').to.equal('b2');
    g.release('a1');
    g.release('a1'); // twice is once
    await g.turn();
    expect(g.admitted.at(-1)).to.equal('a3');
    expect(g.gate.load(1)).to.deep.equal({ inFlight: 2, waiting: 1 });
  });

  it("refuses an account's run when it is full and its queue is long, and only that account's", async () => {
    const g = manualGate(1, 2);
    for (let i = 1; i <= 3; i++) void g.enter(1, `a${i}`);
    await g.turn();
    expect(g.gate.load(1)).to.deep.equal({ inFlight: 1, waiting: 2 });
    expect(await g.gate.enter(1)).to.equal('full');
    const other = g.enter(2, 'b1');
    await g.turn();
    expect(await other).to.be.a('function');
  });

  it('hands every waiting run back when closed, and refuses new ones', async () => {
    const g = manualGate(1, 10);
    const answers = [g.enter(1, 'a1'), g.enter(1, 'a2'), g.enter(2, 'b1')];
    await g.turn();
    g.gate.close();
    const [a1, a2, b1] = await Promise.all(answers);
    expect(typeof a1).to.equal('function');
    expect(a2).to.equal('closed');
    expect(typeof b1).to.equal('function');
    expect(await g.gate.enter(3)).to.equal('closed');
  });

  it('forgets an account once it has nothing in flight or waiting', async () => {
    const g = manualGate(1, 10);
    void g.enter(7, 'x');
    await g.turn();
    g.release('x');
    expect(g.gate.load(7)).to.deep.equal({ inFlight: 0, waiting: 0 });
  });
});
