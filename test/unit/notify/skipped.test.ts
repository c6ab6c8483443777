import { expect } from 'chai';
import { decideJobNotify, evolveJobNotify, initialJobNotifyState, type ExecutionFacts, type JobFacts, type JobNotifyState, type Trigger } from '../../../shared/notify/index.ts';

// notifySkipped over the pure rules: given the executions seen, when a skipped run (or a late
// run after downtime) arrives, then these triggers follow, and the failure count is untouched.

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const job = (over: Partial<JobFacts> = {}): JobFacts => ({
  id: 7, accountId: 1, name: 'report', url: 'https://example.com/r', group: null, groupName: '', notify: true, notifyEvery: 1, notifyMatch: '', notifyTime: null,
  notifyFailureRate: null, notifyFailureWindow: 60, failureThreshold: 20, muted: false, enabledAt: 0, channels: null, notifyReminder: null, escalations: [], notifySkipped: true,
  ...over,
});
let seq = 0;
const run = (failed: boolean, over: Partial<ExecutionFacts> = {}): ExecutionFacts => ({
  runId: `run-${++seq}`, time: Math.floor(NOW / 1000), failed, httpStatus: failed ? 500 : 200, error: failed ? 'HTTP status 500' : '', output: '', downloaded: 0, executionTime: 0.1,
  ...over,
});
const skip = (skipReason: string, missed = 0) => ({ ...run(false, { httpStatus: 0, error: 'skipped: ...' }), skipReason, ...(missed ? { missed } : {}) });

function given(settings: Partial<JobFacts>, executions: ExecutionFacts[], state: JobNotifyState = initialJobNotifyState()) {
  const triggers: Trigger[] = [];
  for (const execution of executions) {
    const events = decideJobNotify({ job: job(settings), execution }, state, NOW);
    state = events.reduce(evolveJobNotify, state);
    for (const e of events) if (e.type === 'NotificationTriggered') triggers.push(e.data.trigger);
  }
  return { state, triggers };
}

describe('notification rules: notifySkipped', () => {
  it('each reason is told as skipped, with why; the skip leaves the failure count and the "okay" to come as they were', () => {
    const { triggers, state } = given({}, [run(true), skip('instances'), skip('fair_share'), skip('account_disabled', 12), run(false)]);
    expect(triggers.map((t) => [t.kind, t.reasons[0]])).to.deep.equal([
      ['failed', 'the run failed'],
      ['skipped', "the run was skipped: the job's instances limit was reached (its earlier runs were still in flight)"],
      ['skipped', "the run was skipped: the account's runs waiting on an executor reached its fair share"],
      ['skipped', '12 scheduled runs were not made while the account was disabled'],
      ['okay', 'the run succeeded again after a notified failure'],
    ]);
    expect(triggers[1]!.fail, 'the count at the skip').to.equal(1);
    expect(state.fail).to.equal(0);
  });

  it('off by default, and silenced like the rest (notify off, muted, snoozed)', () => {
    for (const settings of [{ notifySkipped: false }, { notifySkipped: undefined }, { notify: false }, { muted: true }]) {
      expect(given(settings, [skip('instances')]).triggers, JSON.stringify(settings)).to.deep.equal([]);
    }
    const snoozed = { ...initialJobNotifyState(), snooze: { until: NOW + 60_000 } };
    expect(given({}, [skip('instances')], snoozed).triggers).to.deep.equal([]);
  });

  it('a late run after downtime: told as missed when it succeeded, and the sentence joins a failure', () => {
    const late = given({}, [run(false, { missed: 7 })]).triggers;
    expect(late.map((t) => [t.kind, t.reasons])).to.deep.equal([['missed', ['7 scheduled runs were missed while Tock was down: this one late run stands for them']]]);
    const failed = given({}, [run(true, { missed: 3 })]).triggers;
    expect(failed.map((t) => [t.kind, t.reasons])).to.deep.equal([['failed', ['the run failed', '3 scheduled runs were missed while Tock was down: this one late run stands for them']]]);
    expect(given({ notifySkipped: false }, [run(false, { missed: 7 })]).triggers).to.deep.equal([]);
  });
});
