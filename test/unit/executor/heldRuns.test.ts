import { expect } from 'chai';
import type { BusMessage } from '../../../shared/bus/bus.ts';
import { createHeldRuns } from '../../../services/executor/heldRuns.ts';

/** A due run's message that counts the heartbeats it is given. */
function message(): BusMessage & { beats: number } {
  const msg = {
    subject: 'tock.runs.due.1',
    data: new Uint8Array(),
    headers: {},
    seq: 1,
    deliveryCount: 1,
    beats: 0,
    ack: async () => undefined,
    nak: () => undefined,
    term: () => undefined,
    working: () => void msg.beats++,
  };
  return msg;
}

describe('held runs: heartbeats, and runs held past their ack wait', () => {
  const ackWaitMs = 5000;
  let now = 0;
  const held = () => createHeldRuns(ackWaitMs, { now: () => now, timers: false });

  beforeEach(() => (now = 1_000_000));

  it('beats for a run held a third of the ack wait, from its arrival, and the run stays its holder\'s', () => {
    const runs = held();
    const msg = message();
    runs.hold(msg);
    now += 1000;
    runs.beat();
    expect(msg.beats, 'not yet due a heartbeat').to.equal(0);
    // Taken up by its handler later (settleRun holds it again): the arrival still counts.
    runs.hold(msg);
    now += 700;
    runs.beat();
    expect(msg.beats).to.equal(1);
    for (let i = 0; i < 20; i++) {
      now += 800;
      runs.beat();
    }
    expect(msg.beats).to.be.at.least(6);
    expect(runs.lapsed(msg)).to.equal(false);
  });

  it('a run not heard of by the bus for most of its ack wait (the event loop starved) is lapsed: no more heartbeats, never called', () => {
    const runs = held();
    const msg = message();
    runs.hold(msg);
    now += 1700;
    runs.beat();
    expect(msg.beats).to.equal(1);
    // Starved: no heartbeat for longer than the bus waits; it may have redelivered the run.
    now += 4700;
    expect(runs.lapsed(msg), 'checked before the heartbeat had a turn').to.equal(true);
    runs.beat();
    expect(msg.beats, 'a late heartbeat cannot win the run back').to.equal(1);
    runs.hold(msg);
    now += 2000;
    runs.beat();
    expect(runs.lapsed(msg)).to.equal(true);
    expect(msg.beats).to.equal(1);
  });

  it('the heartbeat after a pause finds the run lapsed as well, whichever runs first', () => {
    const runs = held();
    const msg = message();
    runs.hold(msg);
    now += 4600;
    runs.beat();
    expect(msg.beats).to.equal(0);
    expect(runs.lapsed(msg)).to.equal(true);
  });

  it('a run read right after a pause may have waited in the socket since before it: lapsed at once when the pause was long', () => {
    const runs = held();
    runs.beat();
    // Stopped (SIGSTOP, a starved machine) while the bus sent a run and then redelivered it here.
    now += 6000;
    runs.beat();
    const read = message();
    runs.hold(read);
    expect(runs.lapsed(read), 'its ack wait may have run out before it was read').to.equal(true);
    // Turning steadily again: what is read from now on arrived while this process was listening.
    for (let i = 0; i < 3; i++) {
      now += 250;
      runs.beat();
    }
    const fresh = message();
    runs.hold(fresh);
    now += 1000;
    expect(runs.lapsed(fresh)).to.equal(false);
  });

  it('a short pause ages what is read after it by the pause, no more', () => {
    const runs = held();
    runs.beat();
    now += 1000;
    runs.beat();
    const read = message();
    runs.hold(read);
    now += 3400;
    expect(runs.lapsed(read), 'read 4.4 s after the last turn before the pause').to.equal(false);
    now += 200;
    expect(runs.lapsed(read)).to.equal(true);
  });

  it('a run released (settled) is no longer beaten for, and a run never held is not lapsed', () => {
    const runs = held();
    const msg = message();
    runs.hold(msg);
    runs.release(msg);
    now += 10_000;
    runs.beat();
    expect(msg.beats).to.equal(0);
    expect(runs.lapsed(msg)).to.equal(false);
    expect(runs.lapsed(message())).to.equal(false);
  });
});
