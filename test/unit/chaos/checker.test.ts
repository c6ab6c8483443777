import { expect } from 'chai';
import { check, occursAt, statesAt } from '../../chaos/checker.ts';
import type { Arrival, History, JobState, LogResult, Op } from '../../chaos/history.ts';

const T0 = 1_800_000_000; // a whole second, Unix seconds
const job = (over: Partial<JobState> = {}): JobState => ({ exists: true, path: '/c/a/v0', expression: '* * * * * *', paused: false, ...over });
const add: Op = { key: 'a', kind: 'add', sendMs: (T0 - 2) * 1000, ackMs: (T0 - 2) * 1000 + 100, acknowledged: true, after: job(), jobId: 7 };
const call = (second: number, path = '/c/a/v0', runId = `7:${second * 1000}`, at = second * 1000 + 50): Arrival => ({ url: `${path}?at=${second * 1000}`, at, scheduled: String(second), runId });
const log = (second: number, over: Partial<LogResult> = {}): LogResult => ({ key: 'a', time: second, status: 0, httpStatus: 200, error: '', missed: 0, ...over });
const seconds = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Job `a` every second over T0..T0+9, every occurrence called and logged once: a clean run. */
function history(over: Partial<History> = {}): History {
  const window = seconds(T0, T0 + 9);
  return {
    fromMs: T0 * 1000,
    toMs: (T0 + 9) * 1000,
    ops: [add],
    arrivals: window.map((s) => call(s)),
    logs: window.map((s) => log(s)),
    logsFrom: {},
    store: [{ jobId: 7, type: 'JobCreated', at: add.sendMs + 50 }],
    finalJobs: [{ id: 7, path: '/c/a/v0', expression: '* * * * * *', status: 0 }],
    deliveries: [],
    faults: [],
    misfireMs: 10_000,
    ...over,
  };
}
const kinds = (h: History) => check(h).anomalies.map((a) => a.kind);

describe('chaos checker (history -> verdict)', () => {
  it('finds nothing wrong in a clean history and counts its occurrences', () => {
    const verdict = check(history());
    expect(verdict.anomalies).to.deep.equal([]);
    expect(verdict.occurrences).to.include({ checked: 10, required: 10, ran: 10 });
  });

  it('reports a double run: one occurrence, two run ids', () => {
    const h = history();
    h.arrivals.push(call(T0 + 3, '/c/a/v0', `7:${(T0 + 3) * 1000}:r2`));
    expect(kinds(h)).to.deep.equal(['double']);
  });

  it('reports a lost run, in the target and in cron_logs alike', () => {
    const h = history();
    h.arrivals = h.arrivals.filter((a) => a.scheduled !== String(T0 + 4));
    h.logs = h.logs.filter((l) => l.time !== T0 + 4);
    expect(kinds(h)).to.deep.equal(['lost']);
  });

  it('accepts missed occurrences only when one late run says it stands for them', () => {
    const gap = (missed: number) => {
      const h = history();
      h.arrivals = h.arrivals.filter((a) => Number(a.scheduled) < T0 + 2 || Number(a.scheduled) > T0 + 6);
      h.logs = h.logs.filter((l) => l.time < T0 + 2 || l.time > T0 + 6);
      h.arrivals.push(call(T0 + 6));
      h.logs.push(log(T0 + 6, { missed }));
      return h;
    };
    expect(kinds(gap(5))).to.deep.equal([]);
    expect(check(gap(5)).occurrences.collapsed).to.equal(4);
    // Standing for 3 only (T0+4..T0+6): T0+2 and T0+3 are lost.
    expect(kinds(gap(3))).to.deep.equal(['lost', 'lost']);
  });

  it('reports an acknowledged URL edit not in effect from its next occurrence', () => {
    const edit: Op = { key: 'a', kind: 'url', sendMs: (T0 + 4) * 1000 + 100, ackMs: (T0 + 4) * 1000 + 300, acknowledged: true, after: job({ path: '/c/a/v1' }), jobId: 7 };
    const h = history({ ops: [add, edit], finalJobs: [{ id: 7, path: '/c/a/v1', expression: '* * * * * *', status: 0 }] });
    h.store.push({ jobId: 7, type: 'JobEdited', at: edit.sendMs + 100 });
    h.arrivals = h.arrivals.map((a) => (Number(a.scheduled) >= T0 + 6 ? call(Number(a.scheduled), '/c/a/v1') : a));
    // T0+5 still called the old URL, after the edit was acknowledged.
    expect(check(h).anomalies.map((a) => [a.kind, a.detail.slice(0, 2)])).to.deep.equal([['wrong-url', 'a ']]);
    h.arrivals = h.arrivals.map((a) => (a.scheduled === String(T0 + 5) ? call(T0 + 5, '/c/a/v1') : a));
    expect(kinds(h)).to.deep.equal([]);
  });

  it('reports a run after an acknowledged pause, a schedule change and a delete', () => {
    const pause: Op = { key: 'a', kind: 'pause', sendMs: (T0 + 4) * 1000, ackMs: (T0 + 4) * 1000 + 200, acknowledged: true, after: job({ paused: true }), jobId: 7 };
    const h = history({ ops: [add, pause], finalJobs: [{ id: 7, path: '/c/a/v0', expression: '* * * * * *', status: 5 }] });
    h.store.push({ jobId: 7, type: 'JobPaused', at: pause.sendMs + 100 });
    expect(kinds(h).filter((k) => k === 'not-in-effect')).to.have.length(5);

    const every2: Op = { ...pause, kind: 'schedule', after: job({ expression: '*/2 * * * * *' }) };
    const h2 = history({ ops: [add, every2], finalJobs: [{ id: 7, path: '/c/a/v0', expression: '*/2 * * * * *', status: 0 }] });
    h2.store.push({ jobId: 7, type: 'JobEdited', at: every2.sendMs + 100 });
    const odd = seconds(T0 + 5, T0 + 9).filter((s) => s % 2 === 1).length;
    expect(kinds(h2)).to.deep.equal(Array(odd).fill('not-in-effect'));

    const del: Op = { ...pause, kind: 'delete', after: { ...job(), exists: false } };
    const h3 = history({ ops: [add, del], finalJobs: [] });
    h3.store.push({ jobId: 7, type: 'JobDeleted', at: del.sendMs + 100 });
    expect(kinds(h3)).to.deep.equal(Array(5).fill('not-in-effect'));
  });

  it('lets an occurrence while an edit is in flight go either way', () => {
    const pause: Op = { key: 'a', kind: 'pause', sendMs: (T0 + 3) * 1000 + 500, ackMs: (T0 + 5) * 1000 + 500, acknowledged: true, after: job({ paused: true }), jobId: 7 };
    expect(statesAt([add, pause], (T0 + 4) * 1000)).to.have.length(2);
    const h = history({ ops: [add, pause], finalJobs: [{ id: 7, path: '/c/a/v0', expression: '* * * * * *', status: 5 }] });
    h.store.push({ jobId: 7, type: 'JobPaused', at: (T0 + 5) * 1000 });
    h.arrivals = h.arrivals.filter((a) => Number(a.scheduled) <= T0 + 4);
    h.logs = h.logs.filter((l) => l.time <= T0 + 4);
    expect(kinds(h)).to.deep.equal([]);
    expect(check(h).occurrences).to.include({ optional: 2 });
  });

  it('counts a repeat with the same run id around an executor kill, and reports one without a fault', () => {
    const h = history();
    h.arrivals.push(call(T0 + 2, '/c/a/v0', `7:${(T0 + 2) * 1000}`, (T0 + 9) * 1000));
    expect(kinds(h)).to.deep.equal(['redelivery-unexplained']);
    h.faults.push({ kind: 'kill', target: 'executor-1', startMs: (T0 + 2) * 1000 + 60, endMs: (T0 + 4) * 1000 });
    const verdict = check(h);
    expect(verdict.anomalies).to.deep.equal([]);
    expect(verdict.redelivered).to.deep.equal({ total: 1, byFault: { 'kill:executor-1': 1 } });
  });

  it('reports cron_logs disagreeing with the target', () => {
    const h = history();
    h.logs = h.logs.filter((l) => l.time !== T0 + 1);
    h.logs.push(log(T0 + 2));
    expect(kinds(h).sort()).to.deep.equal(['log-double', 'log-missing']);
    const extra = history();
    extra.arrivals = extra.arrivals.filter((a) => a.scheduled !== String(T0 + 3));
    expect(kinds(extra).sort()).to.deep.equal(['log-extra', 'lost']);
  });

  it('reports an acknowledged job missing at the end and an acknowledged operation missing from the store', () => {
    expect(kinds(history({ finalJobs: [] }))).to.deep.equal(['job-lost']);
    expect(kinds(history({ store: [] }))).to.deep.equal(['edit-not-in-store']);
  });

  it('reports a notification item delivered twice unless a notifier kill interrupted its send', () => {
    const item = { id: 7, time: T0 + 1, event: 'failed' };
    const deliveries = [
      { at: (T0 + 5) * 1000, items: [item] },
      { at: (T0 + 70) * 1000, items: [item, { id: 7, time: T0 + 2, event: 'okay' }] },
    ];
    expect(kinds(history({ deliveries }))).to.deep.equal(['notification-twice']);
    const faults = [{ kind: 'kill' as const, target: 'notifier', startMs: (T0 + 5) * 1000 + 20, endMs: (T0 + 8) * 1000 }];
    expect(check(history({ deliveries, faults })).notifications).to.deep.equal({ messages: 2, items: 3, repeatedAfterNotifierKill: 1 });
  });

  it('knows the schedules the workload sets, and refuses others', () => {
    expect([0, 1, 2, 3].map((s) => occursAt('*/2 * * * * *', T0 + s))).to.deep.equal([true, false, true, false]);
    expect(() => occursAt('0 * * * *', T0)).to.throw(/does not know/);
  });
});
