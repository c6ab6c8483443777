import { expect } from 'chai';
import {
  decideJobNotify,
  durationText,
  evolveJobNotify,
  initialJobNotifyState,
  type ExecutionFacts,
  type JobFacts,
  type JobNotifyState,
  type Trigger,
} from '../../../shared/notify/index.ts';

const NOW = Date.UTC(2026, 10, 23, 12);
const T0 = NOW / 1000;

const job = (over: Partial<JobFacts> = {}): JobFacts => ({
  id: 7, accountId: 1, name: 'backup', url: 'https://example.com/', group: null, groupName: '',
  notify: true, notifyEvery: 1, notifyMatch: '', notifyTime: null, notifyFailureRate: null, notifyFailureWindow: 60,
  failureThreshold: 100, muted: false, enabledAt: 0, channels: null, notifyReminder: null, escalations: [], ...over,
});

let seq = 0;
/** A run at `minute` past T0, decided at its scheduled time. */
const run = (minute: number, failed: boolean): ExecutionFacts => ({
  runId: `run-${++seq}`, time: T0 + minute * 60, failed, httpStatus: failed ? 500 : 200, error: failed ? 'HTTP status 500' : '', output: '', downloaded: 0, executionTime: 0.1,
});

function feed(runs: ExecutionFacts[], settings: Partial<JobFacts> = {}, state: JobNotifyState = initialJobNotifyState()) {
  const triggers: Trigger[] = [];
  for (const execution of runs) {
    const events = decideJobNotify({ job: job(settings), execution }, state, NOW + (execution.time - T0) * 1000);
    state = events.reduce(evolveJobNotify, state);
    for (const e of events) if (e.type === 'NotificationTriggered') triggers.push(e.data.trigger);
  }
  return { state, triggers };
}
/** Runs every `step` minutes from `from` to `to` (inclusive), failed or not. */
const every = (step: number, from: number, to: number, failed = true) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => run(from + i * step, failed));
const minuteOf = (t: Trigger) => (t.execution.time - T0) / 60;

describe('reminders and escalation (shared/notify followUps)', () => {
  it('with notifyReminder the failure is told once, then reminded at the first failed run N hours after it was last told', () => {
    const { triggers, state } = feed([...every(30, 0, 300), run(310, false)], { notifyReminder: 2 });
    expect(triggers.map((t) => [t.kind, minuteOf(t)])).to.deep.equal([['failed', 0], ['failed', 120], ['failed', 240], ['okay', 310]]);
    expect(triggers[1]!.reasons).to.deep.equal(['still failing (a reminder every 2 hours): 5 consecutive failures since 12:00 UTC']);
    expect(state).to.include({ fail: 0, failureNotifiedAt: 0, escalated: 0 });
    // Without it, every failure notifies as before.
    expect(feed(every(30, 0, 300)).triggers).to.have.length(11);
  });

  it('the auto-disable is still told when it comes, and resets the reminder clock', () => {
    const { triggers } = feed(every(30, 0, 260), { notifyReminder: 2, failureThreshold: 6 });
    expect(triggers.map((t) => [t.kind, minuteOf(t)])).to.deep.equal([['failed', 0], ['failed', 120], ['disabled', 150]]);
  });

  it('a failure told only as a rate is reminded as a rate, so the next success sends no "okay again"', () => {
    const flapping = Array.from({ length: 200 }, (_, i) => run(i * 2, i % 2 === 0));
    const { triggers } = feed(flapping, { notifyEvery: 100, notifyFailureRate: 50, notifyReminder: 1 });
    expect(triggers.map((t) => [t.kind, minuteOf(t)])).to.deep.equal([['rate', 4], ['rate', 64], ['rate', 124], ['rate', 184], ['rate', 244], ['rate', 304], ['rate', 364]]);
    expect(triggers[1]!.reasons[0]).to.match(/^still failing often \(a reminder every 1 hour\): \d+ of \d+ runs in the last 60 minutes failed/);
  });

  it('escalation: at the first failed run past each threshold, with how long; every later trigger of that failure carries it', () => {
    const { triggers } = feed([...every(10, 0, 130), run(140, false)], { escalations: [30, 120] });
    expect(triggers.map((t) => [minuteOf(t), t.escalated ?? 0, t.onlyEscalation ?? false])).to.deep.equal([
      [0, 0, false], [10, 0, false], [20, 0, false], [30, 30, false], [40, 30, false], [50, 30, false], [60, 30, false], [70, 30, false],
      [80, 30, false], [90, 30, false], [100, 30, false], [110, 30, false], [120, 120, false], [130, 120, false], [140, 120, false],
    ]);
    expect(triggers[3]!.reasons).to.deep.equal(['4 consecutive failures', 'failing for 30 minutes, since 12:00 UTC']);
    expect(triggers[12]!.reasons[1]).to.equal('failing for 2 hours, since 12:00 UTC');
    expect(triggers[14]!.kind).to.equal('okay');
  });

  it('escalation of a failure the other channels were not told of: for escalation channels only, its end too; "okay" not owed to the others', () => {
    const { triggers, state } = feed([...every(10, 0, 60), run(70, false)], { notifyEvery: 100, escalations: [30] });
    expect(triggers.map((t) => [t.kind, minuteOf(t), t.escalated, t.onlyEscalation])).to.deep.equal([['failed', 30, 30, true], ['okay', 70, 30, true]]);
    expect(triggers[1]!.reasons).to.deep.equal(['the run succeeded again after an escalated failure']);
    expect(state.notified).to.equal(false);
  });

  it('reminders reach escalation channels alone when only they were told', () => {
    const { triggers } = feed(every(30, 0, 300), { notifyEvery: 100, escalations: [60], notifyReminder: 2 });
    expect(triggers.map((t) => [minuteOf(t), t.onlyEscalation ?? false, t.escalated])).to.deep.equal([[60, true, 60], [180, true, 60], [300, true, 60]]);
  });

  it('nothing while the job is muted or notify is off; a new failure starts afresh', () => {
    expect(feed(every(10, 0, 60), { muted: true, escalations: [30], notifyReminder: 1 }).triggers).to.deep.equal([]);
    const first = feed([...every(10, 0, 40), run(50, false)], { notifyEvery: 100, escalations: [30] });
    const second = feed(every(10, 60, 100), { notifyEvery: 100, escalations: [30] }, first.state);
    expect(second.triggers.map((t) => minuteOf(t))).to.deep.equal([90]);
  });

  it('durations read as a person says them', () => {
    expect(durationText(30)).to.equal('1 minute');
    expect(durationText(35 * 60)).to.equal('35 minutes');
    expect(durationText(2 * 3600 + 5 * 60 + 7)).to.equal('2 hours 5 minutes');
    expect(durationText(3 * 86_400 + 3600 + 60)).to.equal('3 days 1 hour');
  });
});
