import { expect } from 'chai';
import {
  RATE_MIN_RUNS,
  decideJobNotify,
  evolveJobNotify,
  initialJobNotifyState,
  rateReached,
  rateTotals,
  recordRun,
  type ExecutionFacts,
  type JobFacts,
  type JobNotifyEvent,
  type JobNotifyState,
  type Trigger,
} from '../../../shared/notify/index.ts';

const NOW = Date.UTC(2026, 10, 23, 12);
const T0 = NOW / 1000;

const job = (over: Partial<JobFacts> = {}): JobFacts => ({
  id: 7, accountId: 1, name: 'flappy', url: 'https://example.com/', group: null, groupName: '',
  notify: true, notifyEvery: 3, notifyMatch: '', notifyTime: null, notifyFailureRate: 50, notifyFailureWindow: 60,
  failureThreshold: 20, muted: false, enabledAt: 0, channels: null, notifyReminder: null, escalations: [], ...over,
});

let seq = 0;
/** A run at `minute` past T0, failed or not. */
const run = (minute: number, failed: boolean): ExecutionFacts => ({
  runId: `run-${++seq}`, time: T0 + minute * 60, failed, httpStatus: failed ? 500 : 200, error: failed ? 'HTTP status 500' : '', output: '', downloaded: 0, executionTime: 0.1,
});

/** Runs through decide and evolve as the notifier does; every trigger, and the events, in order. */
function feed(runs: ExecutionFacts[], settings: Partial<JobFacts> = {}, state: JobNotifyState = initialJobNotifyState()) {
  const triggers: Trigger[] = [];
  const events: JobNotifyEvent[] = [];
  for (const execution of runs) {
    const decided = decideJobNotify({ job: job(settings), execution }, state, NOW + (execution.time - T0) * 1000);
    state = decided.reduce(evolveJobNotify, state);
    events.push(...decided);
    for (const e of decided) if (e.type === 'NotificationTriggered') triggers.push(e.data.trigger);
  }
  return { state, triggers, events };
}

/** Every other run failing, one a minute, from minute `from`. */
const flapping = (n: number, from = 0) => Array.from({ length: n }, (_, i) => run(from + i, i % 2 === 0));

describe('failure rate over a window (shared/notify failureRate, notifyFailureRate)', () => {
  it('a flapping job (every other run failing) notifies by rate, once, and never by the consecutive count', () => {
    const { triggers } = feed(flapping(40));
    expect(triggers.map((t) => t.kind)).to.deep.equal(['rate']);
    expect(triggers[0]!.reasons).to.deep.equal(['2 of 3 runs in the last 60 minutes failed (67%), at least 50% notifies']);
    expect(triggers[0]!.fail).to.equal(1);
    // Without the rate rule the same runs notify nothing: 1 consecutive failure never reaches notifyEvery 3.
    expect(feed(flapping(40), { notifyFailureRate: null }).triggers).to.deep.equal([]);
  });

  it('waits for enough runs: one failed run out of one is no rate', () => {
    expect(RATE_MIN_RUNS).to.equal(3);
    expect(feed([run(0, true), run(1, true)], { notifyEvery: 100 }).triggers).to.deep.equal([]);
    expect(feed([run(0, true), run(1, true), run(2, true)], { notifyEvery: 100 }).triggers.map((t) => t.kind)).to.deep.equal(['rate']);
  });

  it('says okay once the rate falls below the limit, and may alert again after', () => {
    const runs = [...flapping(10), run(10, false), run(11, true)];
    const { triggers } = feed(runs);
    expect(triggers.map((t) => [t.kind, (t.execution.time - T0) / 60])).to.deep.equal([['rate', 2], ['okay', 10], ['rate', 11]]);
    expect(triggers[1]!.reasons).to.deep.equal(['the failure rate fell below 50%: 5 of 11 runs in the last 60 minutes failed (45%)']);
    expect(triggers[2]!.reasons).to.deep.equal(['6 of 12 runs in the last 60 minutes failed (50%), at least 50% notifies']);
  });

  it('the window slides: failures older than it stop counting', () => {
    // Three failures at minutes 0-2, then a success every 10 minutes: at minute 60 the first failure has left the window.
    const runs = [run(0, true), run(1, true), run(2, true), ...Array.from({ length: 7 }, (_, i) => run(10 + 10 * i, false)), run(75, true), run(76, true), run(77, true)];
    const { triggers, state } = feed(runs, { notifyEvery: 100, notifyFailureRate: 30 });
    expect(triggers.map((t) => [t.kind, (t.execution.time - T0) / 60])).to.deep.equal([['rate', 2], ['okay', 60], ['rate', 77]]);
    expect(rateTotals(state.rate!)).to.deep.equal({ runs: 9, failures: 3 });
  });

  it('counts every run of a rate job (a success lowers the rate), and nothing while muted, alerting once unmuted', () => {
    const { events } = feed([run(0, false), run(1, false)]);
    expect(events.map((e) => e.type)).to.deep.equal(['ExecutionCounted', 'ExecutionCounted']);
    const muted = feed(flapping(5), { muted: true });
    expect(muted.triggers).to.deep.equal([]);
    expect(feed([run(5, true)], {}, muted.state).triggers.map((t) => t.kind)).to.deep.equal(['rate']);
  });

  it('a rate alert is not a notified failure: the next success sends no "okay again"', () => {
    const { triggers } = feed([run(0, true), run(1, true), run(2, true), run(3, false)], { notifyEvery: 100, notifyFailureRate: 10 });
    expect(triggers.map((t) => t.kind)).to.deep.equal(['rate']);
  });

  it('a run that notifies by both rules sends one trigger with both reasons', () => {
    const both = feed([run(0, false), run(1, false), run(2, true), run(3, true), run(4, true)], { notifyEvery: 3, notifyFailureRate: 60 });
    expect(both.triggers.map((t) => [t.kind, t.reasons])).to.deep.equal([['failed', ['3 consecutive failures', '3 of 5 runs in the last 60 minutes failed (60%), at least 60% notifies']]]);
  });

  it('recordRun: 60 buckets of N seconds; a new window size starts afresh', () => {
    let w = recordRun(undefined, 60, T0, true);
    w = recordRun(w, 60, T0 + 30, false);
    expect(w.buckets).to.deep.equal([[T0, 2, 1]]);
    w = recordRun(w, 60, T0 + 3600, false);
    expect(w.buckets.map((b) => b[0])).to.deep.equal([T0 + 3600], 'the bucket an hour before has left');
    w = recordRun(recordRun(undefined, 60, T0, true), 60, T0 + 3599, false);
    expect(rateTotals(w)).to.deep.equal({ runs: 2, failures: 1 });
    expect(recordRun({ ...w, alerted: true }, 30, T0 + 3600, false)).to.deep.equal({ width: 30, buckets: [[T0 + 3600, 1, 0]], alerted: false });
    expect(rateReached(recordRun(w, 60, T0 + 3599, true), 67)).to.equal(false);
    expect(rateReached(recordRun(w, 60, T0 + 3599, true), 66)).to.equal(true);
  });
});
