/** The component schemas of the OpenAPI document (openapi.ts): the records the functions answer. */

import { bool, int, nullable, ref, str, RECORD_SETTINGS, type Schema } from './openapiSchema.ts';

/** The records, by the name a `ref` gives them. */
export const SCHEMAS: Record<string, Schema> = {
  CronJob: {
    type: 'object',
    properties: {
      ...RECORD_SETTINGS,
      id: nullable('integer', 'null in the answer to a delete'),
      fail: int('consecutive failures'),
      status: int('0 active, 1 disabled, 4 disabled after failures, 5 paused, 6 stopped (one-time job done)', { enum: [0, 1, 4, 5, 6] }),
      points: int('runs per day, rounded up, at least 1'),
      pausedUntil: nullable('integer', 'Unix time the pause ends'),
      nextRun: nullable('integer', 'Unix time of the next run'),
      createdAt: int('Unix time'),
      updatedAt: int('Unix time'),
      // Tock's additions, from the logs (FastCron clients ignore fields they do not know).
      lastResult: { oneOf: [ref('Result'), { type: 'null' }], description: 'Tock: the newest result kept (output and error cut to 200 characters; cron_logs has them whole); null before the first run' },
      recentOutcomes: { type: ['array', 'null'], items: { type: 'integer', enum: [0, 1, 2] }, maxItems: 20, description: 'Tock: the statuses of the newest 20 results kept, newest first (0 succeeded, 1 failed, 2 skipped)' },
      runs24h: nullable('integer', 'Tock: results kept that were scheduled in the last 24 hours'),
      failures24h: nullable('integer', 'Tock: how many of those failed'),
      hourly24h: {
        type: ['object', 'null'],
        description: 'Tock: results kept per clock hour, the 24 hours from `from` (Unix seconds; the current hour last), and how many failed in each',
        properties: {
          from: int('Unix time the first hour starts'),
          runs: { type: 'array', items: { type: 'integer' }, minItems: 24, maxItems: 24, description: 'results per hour, oldest first' },
          failures: { type: 'array', items: { type: 'integer' }, minItems: 24, maxItems: 24, description: 'failed results per hour, oldest first' },
        },
      },
      groupName: nullable('string', "Tock: the name of the job's group"),
    },
  },
  Group: { type: 'object', properties: { id: nullable('integer', 'null after a delete'), name: str('name'), jobCount: int('jobs in it'), priority: int('priority') } },
  Account: {
    type: 'object',
    properties: {
      id: int('account id'),
      name: str('name'),
      timezone: str('default time zone of new jobs'),
      plan: str('always "self-hosted"'),
      cron: int("the account's job limit (0: none)"),
      expiryDate: { type: 'null' },
    },
  },
  LogEntry: { type: 'object', properties: { result: ref('Result') } },
  Result: {
    type: 'object',
    properties: {
      id: int('result id'),
      time: int('scheduled Unix time'),
      status: int('0 succeeded, 1 failed, 2 skipped', { enum: [0, 1, 2] }),
      startTime: int('actual start, Unix time'),
      downloaded: int('body bytes'),
      httpStatus: int('HTTP status, 0 when none'),
      error: str('why it failed'),
      output: str('first and last 4 KiB of the body'),
      payload: nullable('string', 'the run payload'),
      ip: str('address called'),
      server: str('executor'),
      executionTime: { type: 'number', description: 'seconds' },
      attempt: int('which attempt of its occurrence (1 the first)'),
      willRetry: bool('another attempt of this occurrence is scheduled'),
      manual: bool('Tock: a run asked for (cron_run, run/payload), not a scheduled one'),
      lateness: { type: 'number', description: 'Tock: seconds from the scheduled time to the start, to the millisecond' },
      missed: int('after downtime, how many scheduled occurrences this one late run stands for (0: an ordinary run); for a skip with skipReason account_disabled, how many runs it stands for'),
      skipReason: { ...nullable('string', 'Tock: why a skipped run (status 2) was not made: instances, fair_share or account_disabled; null otherwise'), enum: ['instances', 'fair_share', 'account_disabled', null] },
    },
  },
  Channel: {
    type: 'object',
    properties: {
      id: int('channel id'),
      type: str('email, webhook, slack, discord, teams or telegram'),
      name: str('name'),
      email: str('email channels: the address'),
      url: str('URL channels: scheme and host, the rest masked'),
      botToken: str('telegram: masked'),
      chatId: str('telegram: the chat'),
      enabled: bool('false after 5 failed deliveries in a row, or when disabled by channel_edit'),
      failures: int('failed delivery attempts in a row'),
      lastError: str('the last delivery error'),
      createdAt: int('Unix time'),
      escalateAfter: int("0, or an escalation channel: told of a job's failure only once it has lasted this many minutes"),
      secret: str('webhook channels, in the answers of channel_add and channel_secret_rotate only: the signing secret, whsec_ and standard base64 (the Standard Webhooks secret; the whole string is the HMAC key of X-Tock-Signature)'),
    },
  },
  Snooze: {
    type: 'object',
    properties: {
      id: int('the cron job id'),
      snoozed: bool("whether the job's notifications are silenced now"),
      until: nullable('integer', 'Unix time the snooze ends; null when it lasts until the job recovers, or there is none'),
      untilRecovery: bool("the snooze ends at the job's next successful run"),
    },
  },
  TestResult: {
    type: 'object',
    properties: {
      status: int('0 succeeded, 1 failed, judged as a run would be (status, keyword, pattern)', { enum: [0, 1] }),
      httpStatus: int('0 when there was no response'),
      error: str('why it failed'),
      executionTime: { type: 'number', description: 'seconds' },
      downloaded: int('body bytes'),
      ip: str('address called'),
      server: str('the executor that called'),
      url: str('the URL called, credentials masked'),
      headers: { type: 'array', items: { type: 'object', properties: { name: str('header name'), value: str('value; job secrets masked') } }, description: 'the final response headers' },
      output: str("the body's first and last 4 KiB, job secrets masked"),
    },
  },
  HistoryEntry: {
    type: 'object',
    properties: {
      revision: int('event number in the job'),
      time: int('Unix time'),
      type: str('what happened'),
      by: nullable('integer', 'account, or null for Tock'),
      data: { type: 'object' },
      version: nullable('integer', 'the version this entry made: 1 at creation, one more per change of the settings; null when it changed no setting'),
      changes: {
        type: ['array', 'null'],
        items: ref('SettingChange'),
        description: 'what the version changed (at creation: every setting that has a value); null when it changed no setting',
      },
      rollbackTo: nullable('integer', 'when the version is a rollback (cron_rollback): the version it restored'),
    },
  },
  SettingChange: {
    type: 'object',
    required: ['field'],
    properties: {
      field: str('the setting, by its API name'),
      before: { description: 'its value before, as cron_get shows it (secret parts masked); absent when only a secret part changed' },
      after: { description: 'its value after, the same way' },
      secret: { const: true, description: 'present when a secret part changed (password, URL credentials, a header value): its values are never shown' },
    },
  },
  Error: {
    type: 'object',
    required: ['status', 'code', 'message'],
    properties: {
      status: { const: 'error' },
      code: int('1 internal/unavailable, 2 unknown function, 3 invalid, 4 missing, 5 not found, 6 wrong state, 7 limit, 11 bad token, 12 rate limited, 13 bad body', {
        enum: [1, 2, 3, 4, 5, 6, 7, 11, 12, 13],
      }),
      message: str('what is wrong, naming the parameter'),
    },
  },
};
