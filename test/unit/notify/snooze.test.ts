import { expect } from 'chai';
import {
  activeSnooze,
  decideJobNotify,
  evolveJobNotify,
  initialJobNotifyState,
  type ExecutionFacts,
  type JobFacts,
  type JobNotifyCommand,
  type JobNotifyEvent,
  type JobNotifyState,
} from '../../../shared/notify/index.ts';

const NOW = Date.UTC(2026, 10, 23, 12);
const T0 = NOW / 1000;
const MIN = 60_000;

const job = (over: Partial<JobFacts> = {}): JobFacts => ({
  id: 7, accountId: 1, name: 'backup', url: 'https://example.com/', group: null, groupName: '',
  notify: true, notifyEvery: 1, notifyMatch: '', notifyTime: null, notifyFailureRate: null, notifyFailureWindow: 60,
  failureThreshold: 100, muted: false, enabledAt: 0, channels: null, notifyReminder: null, escalations: [], ...over,
});

let seq = 0;
const run = (minute: number, failed: boolean): ExecutionFacts => ({
  runId: `run-${++seq}`, time: T0 + minute * 60, failed, httpStatus: failed ? 500 : 200, error: failed ? 'HTTP status 500' : '', output: '', downloaded: 0, executionTime: 0.1,
});

type Step = [minute: number, command: JobNotifyCommand];
const exec = (minute: number, failed: boolean, settings: Partial<JobFacts> = {}): Step => [minute, { job: job(settings), execution: run(minute, failed) }];
const snooze = (minute: number, forMinutes: number | null): Step => [minute, { type: 'Snooze', until: forMinutes === null ? null : NOW + (minute + forMinutes) * MIN }];
const unsnooze = (minute: number): Step => [minute, { type: 'Unsnooze' }];

/** Each step decided at its minute past NOW, as the notifier does; the triggers (kind and minute) and the events. */
function feed(steps: Step[], state: JobNotifyState = initialJobNotifyState()) {
  const triggers: [string, number][] = [];
  const events: JobNotifyEvent[] = [];
  for (const [minute, command] of steps) {
    const decided = decideJobNotify(command, state, NOW + minute * MIN);
    state = decided.reduce(evolveJobNotify, state);
    events.push(...decided);
    for (const e of decided) if (e.type === 'NotificationTriggered') triggers.push([e.data.trigger.kind, minute]);
  }
  return { state, triggers, events };
}

describe('snooze: a job\'s notifications silenced (shared/notify rules)', () => {
  it('for a while: nothing is told until it ends, then the rules go on (the failure count kept all along)', () => {
    const { triggers, state } = feed([exec(0, true), snooze(1, 60), exec(10, true), exec(30, true), exec(59, true), exec(61, true), exec(70, false)]);
    expect(triggers).to.deep.equal([['failed', 0], ['failed', 61], ['okay', 70]]);
    expect(state.snooze).to.equal(null);
  });

  it('until it recovers: failures are silent; the first successful run ends the snooze and is told ("okay" for a failure told before)', () => {
    const { triggers, state, events } = feed([exec(0, true), snooze(1, null), exec(10, true), exec(20, true), exec(30, false), exec(40, true)]);
    expect(triggers).to.deep.equal([['failed', 0], ['okay', 30], ['failed', 40]]);
    expect(state.snooze).to.equal(null);
    expect(events.filter((e) => e.type === 'ExecutionCounted').map((e) => (e.data as { snooze?: unknown }).snooze)).to.deep.equal([undefined, { until: null }, { until: null }, null, undefined]);
  });

  it('silences every rule: rate, reminders, escalation, match, the disable notice', () => {
    const settings = { notifyFailureRate: 10, notifyReminder: 1, escalations: [5], notifyMatch: 'upstream', failureThreshold: 3 };
    const steps = [snooze(0, 600), ...[1, 2, 3, 4, 5, 10, 70, 130].map((m) => exec(m, true, settings))];
    expect(feed(steps).triggers).to.deep.equal([]);
  });

  it('cron_unsnooze ends it at once; ending none decides nothing', () => {
    expect(feed([snooze(0, 600), exec(1, true), unsnooze(2), exec(3, true)]).triggers).to.deep.equal([['failed', 3]]);
    expect(feed([unsnooze(0)]).events).to.deep.equal([]);
    expect(feed([snooze(0, 10), unsnooze(20)]).events.map((e) => e.type)).to.deep.equal(['NotificationsSnoozed']);
  });

  it('a snooze outlives the job being enabled again, and a stream trimmed to its latest event', () => {
    const before = feed([snooze(0, 600), exec(1, true)]);
    const reenabled = feed([exec(2, true, { enabledAt: NOW + 2 * MIN })], before.state);
    expect(reenabled.triggers).to.deep.equal([]);
    // Folded from its last event alone (the store keeps only the recent past), the job is still snoozed.
    const trimmed = [reenabled.events.at(-1)!].reduce(evolveJobNotify, initialJobNotifyState());
    expect(activeSnooze(trimmed.snooze, NOW + 3 * MIN)).to.deep.equal({ until: NOW + 600 * MIN });
    expect(activeSnooze(trimmed.snooze, NOW + 600 * MIN)).to.equal(null);
  });
});
