import { expect } from 'chai';
import { createLogger } from '../../../shared/log.ts';
import { createReadiness } from '../../../shared/readiness.ts';
import { backoff, supervise, type SupervisedRun } from '../../../shared/supervise.ts';
import { nth } from '../../support/nth.ts';

const log = createLogger('test', {}, 'silent');
const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

/** A run the test ends by hand: `fail()` makes it err, as a lost subscription does. */
function controllableRun() {
  let fail!: (error: Error) => void;
  const ended = new Promise<never>((_, reject) => (fail = reject));
  ended.catch(() => undefined);
  const run = { stopped: false, fail, ended, async stop() { run.stopped = true; } };
  return run;
}

describe('supervise', () => {
  it('restarts a run that errs, after a backoff, and keeps the readiness condition false meanwhile', async () => {
    const readiness = createReadiness();
    const runs: ReturnType<typeof controllableRun>[] = [];
    const supervisor = supervise({ name: 'view', log, readiness, minDelayMs: 20, maxDelayMs: 40, start: async () => (runs.push(controllableRun()), runs.at(-1)!) });
    expect(readiness.holds('view')).to.equal(false);
    await supervisor.started;
    expect(readiness.ready()).to.equal(true);
    nth(runs, 0).fail(new Error('store gone'));
    await tick();
    expect(readiness.failing()).to.deep.equal({ view: 'lost: store gone' });
    expect(nth(runs, 0).stopped, 'the failed run is released').to.equal(true);
    await tick(60);
    expect(runs).to.have.length(2);
    expect(readiness.ready()).to.equal(true);
    await supervisor.stop();
    expect(nth(runs, 1).stopped).to.equal(true);
    expect(readiness.failing(), 'a stopped supervisor leaves no condition behind').to.deep.equal({});
  });

  it('retries a start that fails with growing delays until it works', async () => {
    const readiness = createReadiness();
    const attempts: number[] = [];
    const supervisor = supervise({
      name: 'consumer',
      log,
      readiness,
      minDelayMs: 10,
      maxDelayMs: 1000,
      start: async (): Promise<SupervisedRun> => {
        attempts.push(Date.now());
        if (attempts.length < 4) throw new Error('no server');
        return controllableRun();
      },
    });
    await supervisor.started;
    expect(attempts).to.have.length(4);
    expect(readiness.holds('consumer')).to.equal(true);
    await supervisor.stop();
  });

  it('stops at once while waiting to retry, and never starts again after stop', async () => {
    let starts = 0;
    const supervisor = supervise({
      name: 'x',
      log,
      minDelayMs: 10_000,
      start: async () => {
        starts++;
        throw new Error('down');
      },
    });
    await tick(20);
    const began = Date.now();
    await supervisor.stop();
    expect(Date.now() - began).to.be.below(1000);
    await tick(20);
    expect(starts).to.equal(1);
  });

  it('backoff: full jitter under a doubling bound, never below the minimum nor above the maximum', () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      const d = backoff(attempt, 100, 5000);
      expect(d).to.be.at.least(100).and.at.most(Math.min(5000, 100 * 2 ** attempt));
    }
  });
});
