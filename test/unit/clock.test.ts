import { expect } from 'chai';
import { FakeClock } from '../../shared/clock.ts';

describe('FakeClock', () => {
  it('fires timers in time order as time advances', async () => {
    const clock = new FakeClock(1000);
    const fired: number[] = [];
    clock.setTimer(1500, () => fired.push(clock.now()));
    clock.setTimer(1200, () => fired.push(clock.now()));
    const cancel = clock.setTimer(1300, () => fired.push(-1));
    cancel();
    await clock.advance(400);
    expect(fired).to.deep.equal([1200]);
    await clock.advance(100);
    expect(fired).to.deep.equal([1200, 1500]);
    expect(clock.now()).to.equal(1500);
  });
});
