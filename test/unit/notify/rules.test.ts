import { expect } from 'chai';
import { decideJobNotify, evolveJobNotify, initialJobNotifyState, matches, type ExecutionFacts, type JobFacts, type JobNotifyEvent, type JobNotifyState, type Trigger } from '../../../shared/notify/index.ts';

// Given/When/Then over the notification rules: given the executions already seen (and the job's
// settings), when one more execution arrives at the injected time, then these triggers follow.

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

const job = (over: Partial<JobFacts> = {}): JobFacts => ({
  id: 7,
  accountId: 1,
  name: 'nightly backup',
  url: 'https://***:***@example.com/backup',
  group: null,
  groupName: '',
  notify: true,
  notifyEvery: 1,
  notifyMatch: '',
  notifyTime: null,
  notifyFailureRate: null,
  notifyFailureWindow: 60,
  failureThreshold: 20,
  muted: false,
  enabledAt: 0,
  channels: null,
  notifyReminder: null,
  escalations: [],
  ...over,
});

let seq = 0;
const run = (failed: boolean, over: Partial<ExecutionFacts> = {}): ExecutionFacts => ({
  runId: `run-${++seq}`,
  time: Math.floor(NOW / 1000),
  failed,
  httpStatus: failed ? 500 : 200,
  error: failed ? 'HTTP status 500' : '',
  output: failed ? 'Internal Server Error' : 'ok',
  downloaded: 21,
  executionTime: 0.25,
  ...over,
});
const fail = (over: Partial<ExecutionFacts> = {}) => run(true, over);
const ok = (over: Partial<ExecutionFacts> = {}) => run(false, over);

/** Feeds executions through decide + evolve, as the service does; returns every trigger in order. */
function given(settings: Partial<JobFacts>, executions: ExecutionFacts[], state: JobNotifyState = initialJobNotifyState()) {
  const triggers: Trigger[] = [];
  for (const execution of executions) {
    const events = decideJobNotify({ job: job(settings), execution }, state, NOW);
    state = events.reduce(evolveJobNotify, state);
    for (const e of events) if (e.type === 'NotificationTriggered') triggers.push(e.data.trigger);
  }
  return { state, triggers, kinds: triggers.map((t) => t.kind) };
}

describe('notification rules (shared/notify)', () => {
  it('a failure trigger says since when the job is failing (its first failed run); okay says it of the failure that ended', () => {
    const t0 = Math.floor(NOW / 1000);
    const { triggers, state } = given({}, [ok({ time: t0 }), fail({ time: t0 + 60 }), fail({ time: t0 + 120 }), ok({ time: t0 + 180 }), fail({ time: t0 + 240 })]);
    expect(triggers.map((t) => [t.kind, t.failingSince])).to.deep.equal([['failed', t0 + 60], ['failed', t0 + 60], ['okay', t0 + 60], ['failed', t0 + 240]]);
    expect(state.failingSince).to.equal(t0 + 240);
    expect(given({}, [fail({ time: t0 }), ok({ time: t0 + 60 })]).state.failingSince).to.equal(0);
    // A success that only matched its notify text has no failure to tell of.
    expect(given({ notifyMatch: 'ok' }, [ok()]).triggers[0]).to.not.have.property('failingSince');
  });

  it('every failure notifies with notifyEvery 1; the first success after it says okay again, once', () => {
    const { kinds, triggers } = given({}, [fail(), fail(), ok(), ok()]);
    expect(kinds).to.deep.equal(['failed', 'failed', 'okay']);
    expect(triggers[1]!.reasons).to.deep.equal(['2 consecutive failures']);
    expect(triggers[0]!.at).to.equal(NOW);
  });

  it('notifyEvery 3: the 3rd and 6th consecutive failures notify; a success resets the count', () => {
    expect(given({ notifyEvery: 3 }, [fail(), fail(), fail(), fail(), fail(), fail()]).triggers.map((t) => t.fail)).to.deep.equal([3, 6]);
    expect(given({ notifyEvery: 3 }, [fail(), fail(), ok(), fail(), fail()]).kinds).to.deep.equal([]);
  });

  it('no "okay again" when the failures were never notified', () => {
    expect(given({ notifyEvery: 5 }, [fail(), fail(), ok()]).kinds).to.deep.equal([]);
  });

  it('reaching failureThreshold always notifies that the job is disabled, whatever notifyEvery says', () => {
    const { kinds, triggers } = given({ notifyEvery: 100, failureThreshold: 3 }, [fail(), fail(), fail()]);
    expect(kinds).to.deep.equal(['disabled']);
    expect(triggers[0]!.reasons[0]).to.match(/3 consecutive failures reached the failure threshold of 3/);
  });

  it('the disable is notified once, and okay follows the first success after it', () => {
    expect(given({ failureThreshold: 2, notifyEvery: 100 }, [fail(), fail(), fail(), ok()]).kinds).to.deep.equal(['disabled', 'okay']);
  });

  it('enabling the job starts a new count', () => {
    const first = given({ notifyEvery: 2 }, [fail()]);
    expect(given({ notifyEvery: 2, enabledAt: NOW - 1 }, [fail()], first.state).kinds).to.deep.equal([]);
    expect(given({ notifyEvery: 2 }, [fail()], first.state).kinds).to.deep.equal(['failed']);
  });

  it('notifyMatch: output containing the text notifies, also on a success', () => {
    const { kinds, triggers } = given({ notifyMatch: 'WARNING' }, [ok({ output: 'done, WARNING: disk 91%' }), ok({ output: 'done' })]);
    expect(kinds).to.deep.equal(['match']);
    expect(triggers[0]!.reasons).to.deep.equal(['the output contains "WARNING"']);
  });

  it('notifyMatch "!text": output lacking the text notifies', () => {
    expect(given({ notifyMatch: '!BACKUP OK' }, [ok({ output: 'BACKUP OK' }), ok({ output: 'partial' })]).kinds).to.deep.equal(['match']);
    expect(matches('!', 'anything')).to.equal(false);
  });

  it('a failure that also matches is one trigger, kind failed, with both reasons', () => {
    const { triggers } = given({ notifyMatch: 'Error' }, [fail({ output: 'Internal Server Error' })]);
    expect(triggers).to.have.length(1);
    expect(triggers[0]!.kind).to.equal('failed');
    expect(triggers[0]!.reasons).to.deep.equal(['the run failed', 'the output contains "Error"']);
  });

  it('notifyTime: a run longer than that many seconds notifies; exactly that long does not', () => {
    const { kinds, triggers } = given({ notifyTime: 10 }, [ok({ executionTime: 10 }), ok({ executionTime: 12.5 })]);
    expect(kinds).to.deep.equal(['slow']);
    expect(triggers[0]!.reasons).to.deep.equal(['the run took 12.5 s, longer than 10 s']);
  });

  it('notify=false: nothing at all, but failures still count', () => {
    const quiet = given({ notify: false, notifyEvery: 2, notifyMatch: 'x', notifyTime: 1 }, [fail({ output: 'x', executionTime: 5 })]);
    expect(quiet.kinds).to.deep.equal([]);
    expect(quiet.state.fail).to.equal(1);
    expect(given({ notifyEvery: 2 }, [fail()], quiet.state).kinds).to.deep.equal(['failed']);
  });

  it('a job disabled by its owner, or of a disabled account (muted), notifies nothing', () => {
    expect(given({ muted: true, failureThreshold: 1 }, [fail(), fail(), ok()]).kinds).to.deep.equal([]);
  });

  it('a redelivered execution decides nothing twice', () => {
    const again = fail();
    const { kinds, state } = given({}, [again, again]);
    expect(kinds).to.deep.equal(['failed']);
    expect(state.fail).to.equal(1);
  });

  it('a success with nothing to say appends nothing (no write per healthy run)', () => {
    expect(decideJobNotify({ job: job(), execution: ok() }, initialJobNotifyState(), NOW)).to.deep.equal([]);
  });

  it('keeps 1000 characters of output and the masked URL only', () => {
    const { triggers } = given({}, [fail({ output: 'x'.repeat(5000) })]);
    expect(triggers[0]!.execution.output).to.have.length(1000);
    expect(JSON.stringify(triggers[0])).to.not.match(/password|notifyMatch/);
    expect(triggers[0]!.key).to.equal(`${triggers[0]!.execution.runId}:failed`);
  });

  it('events replay to the same state', () => {
    const events: JobNotifyEvent[] = [];
    let state = initialJobNotifyState();
    for (const execution of [fail(), fail(), ok()]) {
      const e = decideJobNotify({ job: job(), execution }, state, NOW);
      events.push(...e);
      state = e.reduce(evolveJobNotify, state);
    }
    expect(events.reduce(evolveJobNotify, initialJobNotifyState())).to.deep.equal(state);
  });
});
