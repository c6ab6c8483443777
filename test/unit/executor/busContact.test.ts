import { expect } from 'chai';
import type { Watch } from '../../../shared/bus/bus.ts';
import { createLogger } from '../../../shared/log.ts';
import { createBusContact } from '../../../services/executor/busContact.ts';

/** A watch whose answers the test sets: current()'s result and when contact came back. */
function fakeWatch() {
  const state = { ok: true, regainedAt: undefined as number | undefined, asked: 0 };
  const watch: Watch = {
    current: async () => (state.asked++, state.ok),
    regainedAt: () => state.regainedAt,
    stop: async () => undefined,
  };
  return { state, watch };
}

const silent = createLogger('test', {}, 'silent');

describe('executor: a run is made only in proven contact with the bus', () => {
  it('says yes when every cancel notice stored until now is read, no when that cannot be proved', async () => {
    const { state, watch } = fakeWatch();
    const inContact = createBusContact(watch, silent);
    expect(await inContact()).to.equal(true);
    state.ok = false;
    expect(await inContact()).to.equal(false);
  });

  it('asks the bus once for the runs of one instant', async () => {
    const { state, watch } = fakeWatch();
    const inContact = createBusContact(watch, silent);
    const answers = await Promise.all(Array.from({ length: 50 }, () => inContact()));
    expect(answers.every(Boolean)).to.equal(true);
    expect(state.asked).to.equal(1);
  });

  it('just back in contact, waits out the grace and asks again before saying yes', async () => {
    const { state, watch } = fakeWatch();
    const inContact = createBusContact(watch, silent, { graceMs: 200 });
    state.regainedAt = Date.now();
    const started = Date.now();
    expect(await inContact()).to.equal(true);
    expect(Date.now() - started).to.be.at.least(150);
    expect(state.asked).to.equal(2);
    // Contact lost again during the grace: no.
    state.regainedAt = Date.now();
    const second = inContact();
    setTimeout(() => (state.ok = false), 50);
    expect(await second).to.equal(false);
  });
});
