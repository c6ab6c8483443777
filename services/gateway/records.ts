import type { Account, CronJob, Group, HistoryEntry } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { ExecutionOutcome, type TestAnswer } from '../../shared/gen/tock/v1/events_pb.ts';
import type { LogEntry } from '../../shared/gen/tock/v1/logs_pb.ts';
import { compileSchedule, SETTING_NAMES, secretFlag, settingOf, type SettingKind } from '../../shared/job/index.ts';
import { dstMarks } from '../../shared/schedule/index.ts';
import { skipReasonName } from '../../shared/skipReasons.ts';
import type { Channel, JobSnoozeReply } from '../../shared/gen/tock/v1/notifier_pb.ts';

const num = (v: bigint | undefined) => (v === undefined ? null : Number(v));

/** A setting's value in the API record, from its proto CronJob field. */
const RECORD: Record<SettingKind, (v: unknown) => unknown> = {
  text: (v) => v,
  int: (v) => v,
  bool: (v) => v,
  optionalInt: (v) => v ?? null,
  ref: (v) => num(v as bigint | undefined),
};

/** Each setting's key in the API record and how its value is read from the proto CronJob: worked out once, not per job of a 1000-job answer. */
const RECORD_FIELDS: [key: string, value: (fields: Record<string, unknown>) => unknown][] = SETTING_NAMES.map((name) => {
  const row = settingOf(name);
  if (row.secret) {
    const flag = secretFlag(name);
    return [flag, (fields) => fields[flag]];
  }
  const read = RECORD[row.kind];
  return [name, (fields) => read(fields[name])];
});

/** The API's cron job record: every setting (a secret one only as has<Name>), then the job's state. */
export function jobRecord(job: CronJob, nextRun: number | null = null) {
  const fields = job as unknown as Record<string, unknown>;
  const record: Record<string, unknown> = { id: job.deleted ? null : Number(job.id) };
  for (const [key, value] of RECORD_FIELDS) record[key] = value(fields);
  record.fail = job.fail;
  record.status = job.status;
  record.points = job.points;
  record.pausedUntil = num(job.pausedUntil);
  record.nextRun = job.deleted ? null : nextRun;
  record.createdAt = Number(job.createdAt);
  record.updatedAt = Number(job.updatedAt);
  return record;
}

/** `cron_next` with `detail`: each run (Unix s) with how a daylight-saving change touched it, or null. */
export function nextRunDetails(job: CronJob, runs: readonly number[]) {
  const marks = dstMarks(compileSchedule(job, Number(job.id)), runs.map((t) => t * 1000));
  return runs.map((time, i) => ({ time, dst: marks[i] ?? null }));
}

/**
 * A cron_history entry. `by`: the account that made the change, or null when Tock did (failure
 * counting, auto-disable). `version`, `changes` and `rollbackTo` are null on entries that change no
 * setting; a change shows `before` and `after` only when they may be shown, `secret` when a secret
 * part changed.
 */
export function historyRecord(e: HistoryEntry) {
  const made = e.version !== undefined;
  return {
    revision: Number(e.revision),
    time: Number(e.time),
    type: e.type,
    by: Number(e.accountId) || null,
    data: JSON.parse(e.dataJson) as unknown,
    version: made ? Number(e.version) : null,
    changes: made
      ? e.changes.map((c) => ({
          field: c.field,
          ...(c.afterJson !== undefined ? { before: JSON.parse(c.beforeJson ?? 'null') as unknown, after: JSON.parse(c.afterJson) as unknown } : {}),
          ...(c.secret ? { secret: true } : {}),
        }))
      : null,
    rollbackTo: e.rollbackTo !== undefined ? Number(e.rollbackTo) : null,
  };
}

export const groupRecord = (g: Group, deleted = false) => ({
  id: deleted ? null : Number(g.id),
  name: g.name,
  jobCount: g.jobCount,
  priority: g.priority,
});

/** FC's account record; ours: plan "self-hosted", cron = the account's job limit (0: none). */
export const accountRecord = (a: Account) => ({
  id: Number(a.id),
  name: a.name,
  timezone: a.timezone,
  plan: 'self-hosted',
  cron: a.jobLimit,
  expiryDate: null,
});

/** The API's result status of an execution outcome: 0 succeeded, 1 failed, 2 skipped. */
export const resultStatus = (outcome: ExecutionOutcome) => (outcome === ExecutionOutcome.SUCCEEDED ? 0 : outcome === ExecutionOutcome.SKIPPED ? 2 : 1);

/** One execution as the API's logs answer it: each element is { result: {...} } (docs/api.md, `cron_logs`). */
export function logRecord(entry: LogEntry) {
  const e = entry.execution!;
  return {
    result: {
      id: Number(entry.id),
      time: Number(e.time),
      status: resultStatus(e.outcome),
      startTime: Math.floor(Number(e.startTimeMs) / 1000),
      downloaded: Number(e.downloaded),
      httpStatus: e.httpStatus,
      error: e.error,
      output: e.output,
      payload: e.payload ?? null,
      ip: e.ip,
      server: e.server,
      executionTime: e.executionTime,
      // Tock's: which attempt of its occurrence (retries), and whether another one follows.
      attempt: e.attempt || 1,
      willRetry: e.willRetry,
      // After downtime: how many occurrences this one late run stands for (0 for an ordinary run).
      missed: e.missed,
      // Tock's: why a skipped run (status 2) was not made; null for the others.
      skipReason: skipReasonName(e.skipReason),
      // Tock's: a run asked for (cron_run, run/payload) rather than a scheduled one, and how late
      // it started after its time, in seconds to the millisecond (startTime is whole seconds).
      manual: e.manual,
      lateness: Math.max(0, Number(e.startTimeMs) - Number(e.time) * 1000) / 1000,
    },
  };
}

/** A job's snooze (cron_snooze, cron_unsnooze): `until` in Unix seconds, null when it lasts until recovery or there is none. */
export function snoozeRecord(r: JobSnoozeReply) {
  const until = Number(r.until);
  return { id: Number(r.id), snoozed: r.snoozed, until: until > 0 ? Math.floor(until / 1000) : null, untilRecovery: r.untilRecovery };
}

/** A notification channel: its address masked (an email in full); a webhook's `secret` only in the answers of channel_add and channel_secret_rotate. */
export function channelRecord(c: Channel) {
  const address =
    c.type === 'email' ? { email: c.email } : c.type === 'telegram' ? { botToken: c.botToken, chatId: c.chatId } : { url: c.url };
  return {
    id: Number(c.id),
    type: c.type,
    name: c.name,
    ...address,
    enabled: c.enabled,
    failures: c.failures,
    lastError: c.lastError,
    createdAt: Number(c.createdAt),
    escalateAfter: c.escalateAfter,
    ...(c.secret ? { secret: c.secret } : {}),
  };
}

/** cron_test's answer: what the one call got, named as a log entry's result names it (status 0 succeeded, 1 failed). */
export const testRecord = (a: TestAnswer, url: string) => ({
  status: a.succeeded ? 0 : 1,
  httpStatus: a.httpStatus,
  error: a.error,
  executionTime: a.executionTime,
  downloaded: Number(a.downloaded),
  ip: a.ip,
  server: a.server,
  url,
  headers: a.headers.map((h) => ({ name: h.name, value: h.value })),
  output: a.output,
});
