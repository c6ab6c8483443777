/**
 * The chaos run's verdict (pure): from what the target received, what cron_logs, the event store
 * and cron_list say, and what the client was told, every anomaly of the run. See history.ts.
 */
import type { Anomaly, Fault, History, JobState, LogResult, Op, Verdict } from './history.ts';
import { ABSENT } from './history.ts';

/** A second matches `* * * * * *` or `*\/n * * * * *`, the only schedules the workload sets. */
export function occursAt(expression: string, second: number): boolean {
  const field = expression.trim().split(/\s+/)[0] ?? '';
  if (expression.trim() === '* * * * * *') return true;
  const step = /^\*\/(\d+)$/.exec(field);
  if (!step || expression.trim().split(/\s+/).slice(1).join(' ') !== '* * * * *') throw new Error(`the checker does not know the schedule ${expression}`);
  return second % 60 % Number(step[1]) === 0;
}

const runs = (state: JobState, second: number) => state.exists && !state.paused && occursAt(state.expression, second);

/**
 * The states a job may be in for an occurrence at `t`: an operation acknowledged before `t` is in
 * effect; one in flight at `t` (sent, not yet answered or read back) may or may not be.
 */
export function statesAt(ops: Op[], t: number): JobState[] {
  let state = ABSENT;
  for (const op of ops) {
    if (op.ackMs < t) state = op.after;
    else if (op.sendMs < t) return [state, op.after];
    else break;
  }
  return [state];
}

/** `/c/<key>/v3?at=1700000000000` -> key, path and the `at` the executor put in place of the placeholder. */
export function parseCall(url: string): { key: string; path: string; at: number } | null {
  const m = /^\/c\/([^/?]+)(\/[^?]*)?\?at=(\d+)$/.exec(url);
  return m ? { key: m[1]!, path: `/c/${m[1]}${m[2] ?? ''}`, at: Number(m[3]) } : null;
}

/**
 * The fault (kind:target) that explains a run called again with the same run id, first called at
 * `at`: one that left an executor holding runs it could not acknowledge (killed, stopped, cut off
 * from NATS, or NATS gone) from shortly before that call until the executors' ack wait (5 s) and
 * a loaded machine's delay (10 s) after the fault ended. A stopped executor runs what it held when
 * it resumes, while the redelivered copies have gone to the other one.
 */
function explainingFault(faults: Fault[], at: number): string | undefined {
  const f = faults.find((x) => affectsExecutors(x) && at >= x.startMs - 5000 && at <= x.endMs + 15_000);
  return f && `${f.kind}:${f.target}`;
}

const affectsExecutors = (f: Fault) => f.kind === 'nats-restart' || f.target.startsWith('executor');

export function check(h: History): Verdict {
  const anomalies: Anomaly[] = [];
  const flag = (kind: Anomaly['kind'], detail: string) => anomalies.push({ kind, detail });
  const opsOf = new Map<string, Op[]>();
  for (const op of [...h.ops].sort((a, b) => a.sendMs - b.sendMs)) opsOf.set(op.key, [...(opsOf.get(op.key) ?? []), op]);
  const jobIdOf = new Map<string, number>();
  for (const op of h.ops) if (op.jobId !== undefined) jobIdOf.set(op.key, op.jobId);

  // The target's record, by key and scheduled second.
  const calls = new Map<string, Map<number, { runId: string; path: string; at: number }[]>>();
  for (const a of h.arrivals) {
    const parsed = parseCall(a.url);
    if (!parsed || !opsOf.has(parsed.key)) {
      flag('unknown-call', `${a.url} (run ${a.runId}) matches no job the client added`);
      continue;
    }
    const ms = Number(a.runId.split(':')[1]);
    if (parsed.at !== ms || Number(a.scheduled) * 1000 !== ms) flag('bad-timestamp', `${a.url}: run id ${a.runId}, X-Tock-Scheduled-Time ${a.scheduled}`);
    const second = Math.floor(parsed.at / 1000);
    const byKey = calls.get(parsed.key) ?? new Map();
    calls.set(parsed.key, byKey);
    byKey.set(second, [...(byKey.get(second) ?? []), { runId: a.runId, path: parsed.path, at: a.at }]);
  }
  const logsOf = new Map<string, LogResult[]>();
  for (const l of h.logs) logsOf.set(l.key, [...(logsOf.get(l.key) ?? []), l]);

  const occurrences = { checked: 0, required: 0, optional: 0, ran: 0, collapsed: 0 };
  const redelivered = { total: 0, byFault: {} as Record<string, number> };
  const first = Math.ceil(h.fromMs / 1000);
  const last = Math.floor(h.toMs / 1000);
  for (const [key, ops] of opsOf) {
    const byKey = calls.get(key) ?? new Map<number, { runId: string; path: string; at: number }[]>();
    const runnable = (s: number) => statesAt(ops, s * 1000).some((st) => runs(st, s));
    const collapsedRuns = (logsOf.get(key) ?? []).filter((l) => l.missed > 1);
    for (let s = first; s <= last; s++) {
      const states = statesAt(ops, s * 1000);
      const running = states.filter((st) => runs(st, s));
      const got = byKey.get(s) ?? [];
      const runIds = [...new Set(got.map((c) => c.runId))];
      if (running.length === 0 && got.length === 0) continue;
      occurrences.checked++;
      if (running.length === states.length) occurrences.required++;
      else if (running.length) occurrences.optional++;
      const when = `${key} (job ${jobIdOf.get(key) ?? '?'}) at ${new Date(s * 1000).toISOString()}`;
      if (runIds.length > 1) flag('double', `${when} ran as ${runIds.join(', ')}`);
      for (const runId of runIds) {
        const repeats = got.filter((c) => c.runId === runId);
        if (repeats.length < 2) continue;
        redelivered.total += repeats.length - 1;
        // The first call near the fault (an executor held it when it died or stalled), or a repeat
        // near it (NATS lost the acknowledgement and delivered it again).
        const because = repeats.map((c) => explainingFault(h.faults, c.at)).find(Boolean);
        if (because) redelivered.byFault[because] = (redelivered.byFault[because] ?? 0) + repeats.length - 1;
        else flag('redelivery-unexplained', `${when}: run ${runId} called ${repeats.length} times (${repeats.map((c) => new Date(c.at).toISOString()).join(', ')}), no executor or NATS fault around`);
      }
      if (runIds.length) {
        occurrences.ran++;
        if (running.length === 0) {
          flag('not-in-effect', `${when} ran (${got[0]!.path}, at ${new Date(got[0]!.at).toISOString()}) though acknowledged operations say it must not: ${describe(ops, s * 1000)}`);
        } else if (!running.some((st) => st.path === got[0]!.path)) {
          flag('wrong-url', `${when} called ${got[0]!.path}, expected ${running.map((st) => st.path).join(' or ')}: ${describe(ops, s * 1000)}`);
        }
        continue;
      }
      if (running.length < states.length) continue; // optional and not run
      // Required, not run: only a late run standing for it (the misfire rule) may cover it.
      const cover = collapsedRuns.find((l) => {
        if (l.time < s) return false;
        let owed = 0;
        for (let t = s; t <= l.time; t++) if (runnable(t)) owed++;
        return owed <= l.missed;
      });
      if (cover) occurrences.collapsed++;
      else flag('lost', `${when}: no call, no late run standing for it (${describe(ops, s * 1000)})`);
    }
    checkLogs(key, byKey, logsOf.get(key) ?? [], h, first, last, flag);
  }
  checkFinalState(h, opsOf, flag);
  checkStore(h, flag);
  const notifications = checkDeliveries(h, flag);
  return { occurrences, redelivered, notifications, anomalies };
}

/** The operations around `t`, for an anomaly's detail. */
function describe(ops: Op[], t: number): string {
  const near = ops.filter((op) => Math.abs(op.ackMs - t) < 30_000 || Math.abs(op.sendMs - t) < 30_000);
  return near.map((op) => `${op.kind}${op.acknowledged ? '' : '(unacknowledged)'} sent ${op.sendMs - t} ms, answered ${op.ackMs - t} ms from the occurrence`).join('; ') || 'no operation within 30 s';
}

/** cron_logs holds each run the target received once, and nothing the target did not receive. */
function checkLogs(key: string, byKey: Map<number, unknown[]>, logs: LogResult[], h: History, first: number, last: number, flag: (k: Anomaly['kind'], d: string) => void) {
  const from = Math.max(first, h.logsFrom[key] ?? first);
  const logged = new Map<number, LogResult[]>();
  for (const l of logs) if (l.time >= from && l.time <= last) logged.set(l.time, [...(logged.get(l.time) ?? []), l]);
  for (const s of byKey.keys()) {
    if (s < from || s > last) continue;
    if (!logged.has(s)) flag('log-missing', `${key} at ${new Date(s * 1000).toISOString()}: the target received the run, cron_logs has no result for it`);
  }
  for (const [s, results] of logged) {
    if (results.length > 1) flag('log-double', `${key} at ${new Date(s * 1000).toISOString()}: ${results.length} results in cron_logs`);
    if (!byKey.has(s)) flag('log-extra', `${key} at ${new Date(s * 1000).toISOString()}: cron_logs has a result (HTTP ${results[0]!.httpStatus}, ${results[0]!.error || 'no error'}) the target never received`);
  }
}

/** What cron_list shows at the end is what the last acknowledged operations made of each job. */
function checkFinalState(h: History, opsOf: Map<string, Op[]>, flag: (k: Anomaly['kind'], d: string) => void) {
  const listed = new Map(h.finalJobs.map((j) => [j.path.split('/')[2] ?? '', j]));
  for (const [key, ops] of opsOf) {
    const expected = ops.at(-1)!.after;
    const job = listed.get(key);
    if (expected.exists && !job) {
      flag('job-lost', `${key} (job ${ops.find((o) => o.jobId !== undefined)?.jobId ?? '?'}): acknowledged, never deleted, missing from cron_list`);
      continue;
    }
    if (!expected.exists && job) {
      flag('final-state', `${key} (job ${job.id}): deleted (or never acknowledged), still listed`);
      continue;
    }
    if (!job) continue;
    const actual = { path: job.path, expression: job.expression, paused: job.status === 5 };
    const want = { path: expected.path, expression: expected.expression, paused: expected.paused };
    if (JSON.stringify(actual) !== JSON.stringify(want)) flag('final-state', `${key} (job ${job.id}): cron_list has ${JSON.stringify(actual)}, the acknowledged operations ${JSON.stringify(want)}`);
  }
}

const EVENT_OF: Record<Op['kind'], string> = { add: 'JobCreated', url: 'JobEdited', schedule: 'JobEdited', pause: 'JobPaused', resume: 'JobEnabled', delete: 'JobDeleted' };

/** Each acknowledged operation is an event of its job's stream, written between its request and its answer. */
function checkStore(h: History, flag: (k: Anomaly['kind'], d: string) => void) {
  const used = new Set<number>();
  for (const op of h.ops) {
    if (!op.acknowledged || op.jobId === undefined) continue;
    const i = h.store.findIndex((e, n) => !used.has(n) && e.jobId === op.jobId && e.type === EVENT_OF[op.kind] && e.at >= op.sendMs - 1000 && e.at <= op.ackMs + 1000);
    if (i < 0) flag('edit-not-in-store', `${op.key} (job ${op.jobId}): acknowledged ${op.kind} (${new Date(op.ackMs).toISOString()}) has no ${EVENT_OF[op.kind]} event in the store`);
    else used.add(i);
  }
}

/** No item (job, run, event) of a notification is delivered twice, except a send a notifier kill -9 interrupted (docs/notifications.md). */
function checkDeliveries(h: History, flag: (k: Anomaly['kind'], d: string) => void) {
  const seen = new Map<string, number>();
  let items = 0;
  let repeatedAfterNotifierKill = 0;
  for (const d of [...h.deliveries].sort((a, b) => a.at - b.at)) {
    for (const item of d.items) {
      items++;
      const id = `${item.id}:${item.time}:${item.event}`;
      const firstAt = seen.get(id);
      if (firstAt === undefined) {
        seen.set(id, d.at);
        continue;
      }
      const killed = h.faults.some((f) => f.kind === 'kill' && f.target.startsWith('notifier') && f.startMs >= firstAt - 2000 && f.startMs <= firstAt + 5000);
      if (killed) repeatedAfterNotifierKill++;
      else flag('notification-twice', `job ${item.id} ${item.event} of ${new Date(item.time * 1000).toISOString()}: delivered at ${new Date(firstAt).toISOString()} and again at ${new Date(d.at).toISOString()}`);
    }
  }
  return { messages: h.deliveries.length, items, repeatedAfterNotifierKill };
}
