/**
 * The per-function part of the OpenAPI document (openapi.ts): every parameter a function may
 * take, and each function of the gateway's table with its parameters and what it answers (a test
 * holds this table and the gateway's to each other).
 */

import { DEFAULT_SECRET_OVERLAP_S, MAX_ESCALATE_AFTER, MAX_SECRET_OVERLAP_S } from '../../shared/notify/index.ts';
import { bool, int, list, ref, str, type Schema } from './openapiSchema.ts';

/** Every parameter a function may take, by name. */
export const PARAMS = {
  id: int('the cron job (or group) id', { minimum: 1 }),
  ids: { description: 'ids: a list (id[]=1&id[]=2, id=1,2 or a JSON array)', type: 'array', items: { type: 'integer', minimum: 1 }, maxItems: 1000 },
  page: int('page number, from 1', { minimum: 1, default: 1 }),
  limit: int('entries per page (at most 1000)', { minimum: 0, maximum: 1000 }),
  keyword: str('search text'),
  run: int('1 (or a past time): one extra run now; a future Unix time: one extra run then'),
  payload: str('the body of that extra run'),
  time: int('Unix time to run at; absent or past: now', { minimum: 0 }),
  for: str("pause length in English ('15 minutes', '2 days'); absent: until cron_enable"),
  snoozeFor: str("snooze length in English ('2 hours', '3 days'); absent: until the job's next successful run"),
  name: str('the name'),
  priority: int('group priority'),
  timezone: str('IANA time zone name'),
  nextLimit: int('how many run times (1-100)', { minimum: 1, maximum: 100, default: 10 }),
  channelId: int('the channel id', { minimum: 1 }),
  channelType: str('the kind of channel', { enum: ['email', 'webhook', 'slack', 'discord', 'teams', 'telegram'] }),
  email: str('email channel: the address'),
  channelUrl: str('webhook, slack, discord, teams: the URL to POST to (a secret: shown masked afterwards)'),
  botToken: str('telegram: the bot token from @BotFather (a secret: shown masked afterwards)'),
  chatId: str('telegram: the numeric chat id or @channel name'),
  enabled: bool('false pauses the channel; true re-enables one disabled after failures'),
  escalateAfter: int("an escalation channel: told of a job's failure only once it has lasted this many minutes (0: of everything)", { minimum: 0, maximum: MAX_ESCALATE_AFTER }),
  overlap: int('seconds the replaced signing secret still signs (0: it stops at once)', { minimum: 0, maximum: MAX_SECRET_OVERLAP_S, default: DEFAULT_SECRET_OVERLAP_S }),
  version: int("a version of the job, from 1 (its creation); cron_history lists them", { minimum: 1 }),
  versions: bool("Tock's: only the entries that made a version (the creation and each change of the settings)"),
  hours: int('how many hours ahead (1-24)', { minimum: 1, maximum: 24, default: 24 }),
  calendarLimit: int('runs in the answer at most (1-1000)', { minimum: 1, maximum: 1000, default: 1000 }),
} satisfies Record<string, Schema>;
/** The same, looked up by a name that may be unknown. */
export const PARAM_BY_NAME: Readonly<Record<string, Schema>> = PARAMS;

export interface FunctionDoc {
  summary: string;
  /** Parameter names (PARAMS keys), or [wire name, schema] where the wire name differs. */
  params?: (string | [string, Schema])[];
  required?: string[];
  /** Takes the job settings (cron_add, cron_edit, ...). */
  settings?: boolean;
  returns: Schema;
}

const JOB = ref('CronJob');
const JOBS = list(JOB);
const GROUP = ref('Group');
const LOGS = list(ref('LogEntry'));

/** Function name -> its description. */
export const FUNCTION_DOCS: Record<string, FunctionDoc> = {
  cron_list: { summary: "List the account's cron jobs", params: ['page', 'limit', 'keyword'], returns: JOBS },
  cron_get: { summary: 'Get a cron job', params: ['id'], required: ['id'], returns: JOB },
  cron_add: { summary: 'Add a cron job', settings: true, params: ['run', 'payload'], required: ['url'], returns: JOB },
  cron_batch_add: {
    summary:
      'Add up to 1000 cron jobs (JSON body {"data": [...]}); invalid input writes none. With an idempotency key (header X-Idempotency-Key or body idempotencyKey, per account) a retry after a 503 completes the batch under the same ids and never duplicates a job; the same key with another batch is error 3',
    params: [],
    returns: JOBS,
  },
  cron_edit: { summary: 'Edit a cron job', settings: true, params: ['id', 'run', 'payload'], required: ['id'], returns: JOB },
  cron_batch_edit: { summary: 'Edit several cron jobs the same way', settings: true, params: [['id', PARAMS.ids]], required: ['id'], returns: JOBS },
  cron_group_edit: { summary: "Edit every job of a group (id is the group's)", settings: true, params: ['id'], required: ['id'], returns: JOBS },
  cron_enable: { summary: 'Enable a cron job (resets fail)', params: ['id'], required: ['id'], returns: JOB },
  cron_disable: { summary: 'Disable a cron job', params: ['id'], required: ['id'], returns: JOB },
  cron_pause: { summary: 'Pause a cron job, for a while or until enabled', params: ['id', 'for'], required: ['id'], returns: JOB },
  cron_delete: { summary: 'Delete a cron job', params: ['id'], required: ['id'], returns: JOB },
  cron_batch_delete: { summary: 'Delete several cron jobs', params: [['id', PARAMS.ids]], required: ['id'], returns: JOBS },
  cron_batch_enable: { summary: "Tock's: enable several cron jobs (resets fail); one refused id changes none", params: [['id', PARAMS.ids]], required: ['id'], returns: JOBS },
  cron_batch_disable: { summary: "Tock's: disable several cron jobs; one refused id changes none", params: [['id', PARAMS.ids]], required: ['id'], returns: JOBS },
  cron_batch_pause: { summary: "Tock's: pause several cron jobs, for a while or until enabled; one refused id changes none", params: [['id', PARAMS.ids], 'for'], required: ['id'], returns: JOBS },
  cron_run: { summary: 'Run a cron job now or at a time, without changing its schedule', params: ['id', 'time', 'payload'], required: ['id'], returns: { type: 'integer', description: 'Unix time it will run' } },
  cron_test: {
    summary:
      "Tock's: call the URL once with these settings (a new job's, or job id's changed by them, its stored secrets kept) and answer what it got; egress-guarded and within the account's share like a run, recorded nowhere. A target the egress policy refuses is error 3 on url; an account whose share of calls is in use is error 12",
    settings: true,
    params: ['id'],
    returns: ref('TestResult'),
  },
  cron_logs: { summary: "A job's results, newest first", params: ['id', 'page', 'limit', 'keyword'], required: ['id'], returns: LOGS },
  cron_show: { summary: 'Same as cron_logs', params: ['id', 'page', 'limit', 'keyword'], required: ['id'], returns: LOGS },
  cron_failures: { summary: "A job's failed results (without id: the account's)", params: ['id', 'page', 'limit', 'keyword'], returns: LOGS },
  cron_next: {
    summary: 'The next run times (Unix s); with detail, each with how a DST change moved or repeated it',
    params: ['id', ['limit', PARAMS.nextLimit], ['detail', bool("Tock's: answer {time, dst} objects instead of bare times")]],
    required: ['id'],
    returns: {
      oneOf: [
        list({ type: 'integer' }),
        list({
          type: 'object',
          properties: {
            time: { type: 'integer' },
            dst: {
              type: ['object', 'null'],
              description: "null, {kind: 'moved'} (its time was skipped; it runs at the jump) or {kind: 'repeated', pass: 1|2}",
              properties: { kind: { type: 'string', enum: ['moved', 'repeated'] }, pass: { type: 'integer', enum: [1, 2] } },
            },
          },
        }),
      ],
    },
  },
  cron_history: {
    summary: "A job's audit trail, newest first: every change, each change of its settings with its version number and what changed (secrets never shown)",
    params: ['id', 'page', 'limit', 'versions'],
    required: ['id'],
    returns: list(ref('HistoryEntry')),
  },
  cron_rollback: {
    summary:
      "Tock's: restore the settings of an earlier version as a new version (the history is never rewritten), checked as an edit is; the job's state (paused, disabled) stays. When the job has those settings already nothing is recorded",
    params: ['id', 'version'],
    required: ['id', 'version'],
    returns: JOB,
  },
  group_list: { summary: 'List groups', returns: list(GROUP) },
  group_get: { summary: 'Get a group', params: ['id'], required: ['id'], returns: GROUP },
  group_lookup: { summary: 'Find a group by its exact name', params: ['name'], required: ['name'], returns: GROUP },
  group_add: { summary: 'Add a group', params: ['name', 'priority'], required: ['name'], returns: GROUP },
  group_edit: { summary: 'Rename or re-prioritise a group', params: ['id', 'name', 'priority'], required: ['id'], returns: GROUP },
  group_delete: { summary: 'Delete a group; its jobs become ungrouped', params: ['id'], required: ['id'], returns: GROUP },
  group_vanish: { summary: 'Delete a group and its jobs', params: ['id'], required: ['id'], returns: GROUP },
  group_empty: { summary: "Delete a group's jobs", params: ['id'], required: ['id'], returns: GROUP },
  group_items: { summary: "A group's jobs", params: ['id', 'page', 'limit'], required: ['id'], returns: JOBS },
  channel_list: { summary: "The account's notification channels (addresses masked)", returns: list(ref('Channel')) },
  channel_add: {
    summary: 'Add a notification channel; a webhook answers its signing secret, only here',
    params: [['type', PARAMS.channelType], 'name', 'email', ['url', PARAMS.channelUrl], 'botToken', 'chatId', 'escalateAfter'],
    required: ['type'],
    returns: ref('Channel'),
  },
  channel_edit: {
    summary: 'Rename, re-address, disable or re-enable a channel, or change when it escalates',
    params: [['id', PARAMS.channelId], 'name', 'email', ['url', PARAMS.channelUrl], 'botToken', 'chatId', 'enabled', 'escalateAfter'],
    required: ['id'],
    returns: ref('Channel'),
  },
  channel_delete: { summary: 'Delete a channel', params: [['id', PARAMS.channelId]], required: ['id'], returns: ref('Channel') },
  channel_test: {
    summary: 'Send a test message to a channel now',
    params: [['id', PARAMS.channelId]],
    required: ['id'],
    returns: { type: 'object', properties: { delivered: bool('whether the channel accepted it'), error: str('why not') } },
  },
  channel_secret_rotate: {
    summary: 'A new signing secret for a webhook channel, shown only in this answer; the replaced one also signs until the overlap ends',
    params: [['id', PARAMS.channelId], 'overlap'],
    required: ['id'],
    returns: {
      allOf: [
        ref('Channel'),
        { type: 'object', properties: { previousValidUntil: { type: ['integer', 'null'], description: 'Unix time until which the replaced secret also signs; null when it stopped at once' } } },
      ],
    },
  },
  cron_snooze: {
    summary: "Silence a job's notifications for a while, or until its next successful run",
    params: ['id', ['for', PARAMS.snoozeFor]],
    required: ['id'],
    returns: ref('Snooze'),
  },
  cron_unsnooze: { summary: "End a job's snooze", params: ['id'], required: ['id'], returns: ref('Snooze') },
  cron_badge: {
    summary: "Tock's: the job's status badge (an SVG at a secret URL for READMEs and status pages), issued when it has none; asking again answers the same one",
    params: ['id'],
    required: ['id'],
    returns: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        token: str('the badge token: 32 characters of base64url (192 random bits); whoever has it sees the badge'),
        path: str('/badge/<token>.svg'),
        url: { type: ['string', 'null'], description: 'the whole URL, as this request reached Tock' },
        markdown: { type: ['string', 'null'], description: 'the Markdown image of the badge, for a README' },
        issuedAt: { type: 'integer', description: 'Unix time the badge was issued' },
      },
    },
  },
  cron_badge_revoke: {
    summary: "Tock's: end the job's badge; its URL answers 404 at once (a later cron_badge makes a new URL)",
    params: ['id'],
    required: ['id'],
    returns: { type: 'object', properties: { id: { type: 'integer' }, revoked: bool('whether the job had a badge') } },
  },
  account_calendar: {
    summary: "Tock's: every run of the account's jobs in the next hours (at most 24), in time order; at most 100 runs of one job and `limit` in all, `truncated` when a cap left runs out",
    params: [['hours', PARAMS.hours], ['limit', PARAMS.calendarLimit]],
    returns: {
      type: 'object',
      properties: {
        from: { type: 'integer', description: 'Unix time the calendar starts (now)' },
        until: { type: 'integer', description: 'Unix time it ends' },
        truncated: bool('whether a cap (100 runs per job, `limit` in all) left runs out'),
        runs: list({
          type: 'object',
          properties: {
            id: { type: 'integer', description: 'the job' },
            name: { type: 'string' },
            time: { type: 'integer', description: 'Unix time of the run (with its delay, as cron_next)' },
            timezone: { type: 'string', description: "the job's time zone" },
            local: { type: 'string', description: "the time on the job's wall clock, ISO 8601 with its offset" },
          },
        }),
      },
    },
  },
  account_get: { summary: 'The account', returns: ref('Account') },
  account_edit: { summary: "Change the account's time zone", params: ['timezone'], returns: ref('Account') },
  account_token_rotate: {
    summary: "A new API token for the account, shown only in this answer; the token that made the call stops working at once",
    returns: { allOf: [ref('Account'), { type: 'object', properties: { token: str('the new API token (32 letters and digits), shown only here') } }] },
  },
  account_secret_rotate: {
    summary: "A new secret for the signature (X-Tock-Signature) of the account's job requests, shown only in this answer; the previous one also signs for 24 h",
    returns: {
      type: 'object',
      properties: {
        secret: str('the new signing secret (whsec_...): the HMAC-SHA256 key, the whole string'),
        previousValidUntil: { type: ['integer', 'null'], description: 'Unix time until which the replaced secret also signs; null when there was none' },
      },
    },
  },
};
