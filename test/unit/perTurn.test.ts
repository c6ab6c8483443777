import { expect } from 'chai';
import { perTurn } from '../../shared/perTurn.ts';

/** A `run` that records each call's requests and answers each request with its text doubled. */
function recorded(fail?: (requests: string[]) => Error | undefined) {
  const calls: string[][] = [];
  const run = async (requests: string[]) => {
    calls.push(requests);
    const error = fail?.(requests);
    if (error) throw error;
    return requests.map((r) => r + r);
  };
  return { calls, run };
}

describe('perTurn', () => {
  it('answers the requests of one turn with one call per key, each with its own answer in order', async () => {
    const { calls, run } = recorded();
    const ask = perTurn((r: string) => r[0]!, run);
    const answers = await Promise.all(['a1', 'b1', 'a2', 'a3', 'b2'].map(ask));
    expect(answers).to.deep.equal(['a1a1', 'b1b1', 'a2a2', 'a3a3', 'b2b2']);
    expect(calls).to.deep.equal([
      ['a1', 'a2', 'a3'],
      ['b1', 'b2'],
    ]);
  });

  it('never lets a request join a call already on its way: a later request gets a call of its own', async () => {
    let release!: () => void;
    const calls: string[][] = [];
    const ask = perTurn(
      () => 'same',
      async (requests: string[]) => {
        calls.push(requests);
        if (calls.length === 1) await new Promise<void>((r) => (release = r));
        return requests;
      },
    );
    const first = ask('early');
    await new Promise((r) => setImmediate(r));
    expect(calls).to.deep.equal([['early']]);
    const second = ask('late');
    await new Promise((r) => setImmediate(r));
    expect(calls).to.deep.equal([['early'], ['late']]);
    release();
    expect(await Promise.all([first, second])).to.deep.equal(['early', 'late']);
  });

  it("gives a call's failure to the requests that shared it, and only to them", async () => {
    const { run } = recorded((requests) => (requests[0]!.startsWith('x') ? new Error('refused') : undefined));
    const ask = perTurn((r: string) => r[0]!, run);
    const settled = await Promise.allSettled(['x1', 'y1', 'x2'].map(ask));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).to.deep.equal(['refused', 'y1y1', 'refused']);
  });

  it("keeps one request's own failure its own when `run` answers it with a promise", async () => {
    const ask = perTurn(
      () => 'k',
      async (requests: string[]) => requests.map((r) => (r === 'bad' ? Promise.reject(new Error(`no ${r}`)) : r)),
    );
    const settled = await Promise.allSettled(['good', 'bad', 'fine'].map(ask));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).to.deep.equal(['good', 'no bad', 'fine']);
  });

  it('turns a `run` that throws at once into rejections, not an exception in the flush', async () => {
    const ask = perTurn(
      () => 'k',
      (): Promise<string[]> => {
        throw new Error('at once');
      },
    );
    const error = await ask('a').then(
      () => null,
      (e: Error) => e.message,
    );
    expect(error).to.equal('at once');
  });
});
