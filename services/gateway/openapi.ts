/**
 * The OpenAPI 3.1 description of /api/v1, served at /api/v1/openapi.json. One entry per function
 * of the gateway's table (a test holds the two to each other); the user guide is docs/api.md.
 */

import { SETTING_NAMES, secretFlag, settingOf, type SettingKind, type SettingName } from '../../shared/job/index.ts';
import { DEFAULT_SECRET_OVERLAP_S, MAX_ESCALATE_AFTER, MAX_SECRET_OVERLAP_S } from '../../shared/notify/index.ts';

type Schema = Record<string, unknown>;

const int = (description: string, extra: Schema = {}): Schema => ({ type: 'integer', description, ...extra });
const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const bool = (description: string): Schema => ({ type: 'boolean', description });

/** Every parameter a function may take, by name. */
const PARAMS = {
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
  escalateAfter: int('an escalation channel: told of a job\'s failure only once it has lasted this many minutes (0: of everything)', { minimum: 0, maximum: MAX_ESCALATE_AFTER }),
  overlap: int('seconds the replaced signing secret still signs (0: it stops at once)', { minimum: 0, maximum: MAX_SECRET_OVERLAP_S, default: DEFAULT_SECRET_OVERLAP_S }),
} satisfies Record<string, Schema>;
/** The same, looked up by a name that may be unknown. */
const PARAM_BY_NAME: Readonly<Record<string, Schema>> = PARAMS;

/** A setting's JSON type, by its kind (null clears optional ints and the group). */
const SETTING_TYPE: Record<SettingKind, string | string[]> = { text: 'string', int: 'integer', bool: 'boolean', optionalInt: ['integer', 'null'], ref: ['integer', 'null'] };

/** A setting's schema, from its row of the settings table (docs/api.md "Settings"). */
function settingSchema(name: SettingName): Schema {
  const row = settingOf(name);
  const { min, max, maxLength, oneOf, pattern } = row.limits ?? {};
  const schema: Schema = { type: SETTING_TYPE[row.kind], description: row.doc };
  if (oneOf) schema.enum = [...oneOf];
  // "" and null are every setting's "none": worth stating only when the default is something.
  if (typeof row.default !== 'function' && row.default !== '' && row.default !== null) schema.default = row.default;
  if (min !== undefined) schema.minimum = min;
  if (max !== undefined) schema.maximum = max;
  if (maxLength !== undefined) schema.maxLength = maxLength;
  if (pattern !== undefined) schema.pattern = pattern;
  if (row.secret) schema.writeOnly = true;
  return schema;
}

/** The settable fields of a cron job, derived from the settings table. */
export const JOB_SETTINGS: Record<string, Schema> = Object.fromEntries(SETTING_NAMES.map((name) => [name, settingSchema(name)]));

/** The settings as a job record shows them: a secret one only as whether it is set. */
const RECORD_SETTINGS: Record<string, Schema> = Object.fromEntries(
  SETTING_NAMES.map((name) => (settingOf(name).secret ? [secretFlag(name), bool(`whether a ${name} is set`)] : [name, JOB_SETTINGS[name]!])),
);

interface FunctionDoc {
  summary: string;
  /** Parameter names (PARAMS keys), or [wire name, schema] where the wire name differs. */
  params?: (string | [string, Schema])[];
  required?: string[];
  /** Takes the job settings (cron_add, cron_edit, ...). */
  settings?: boolean;
  returns: Schema;
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const list = (item: Schema): Schema => ({ type: 'array', items: item });
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
  cron_run: { summary: 'Run a cron job now or at a time, without changing its schedule', params: ['id', 'time', 'payload'], required: ['id'], returns: { type: 'integer', description: 'Unix time it will run' } },
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
  cron_history: { summary: "A job's audit trail", params: ['id', 'page', 'limit'], required: ['id'], returns: list(ref('HistoryEntry')) },
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
    summary: "A new signing secret for a webhook channel, shown only in this answer; the replaced one also signs until the overlap ends",
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
  account_get: { summary: 'The account', returns: ref('Account') },
  account_edit: { summary: "Change the account's time zone", params: ['timezone'], returns: ref('Account') },
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

const nullable = (type: string, description: string): Schema => ({ type: [type, 'null'], description });

const SCHEMAS: Record<string, Schema> = {
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
      missed: int('after downtime, how many scheduled occurrences this one late run stands for (0: an ordinary run)'),
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
      escalateAfter: int('0, or an escalation channel: told of a job\'s failure only once it has lasted this many minutes'),
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
  HistoryEntry: {
    type: 'object',
    properties: { revision: int('event number in the job'), time: int('Unix time'), type: str('what happened'), by: nullable('integer', 'account, or null for Tock'), data: { type: 'object' } },
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

const ERROR_RESPONSES: Record<string, Schema> = Object.fromEntries<Schema>(
  ([
    ['400', 'invalid or missing parameter, limit exceeded, malformed body'],
    ['401', 'invalid API token'],
    ['404', 'no such job, group or function'],
    ['409', "not allowed in the job's current state"],
    ['413', 'body over 1 MiB'],
    ['500', 'internal error (the message has a request id)'],
    ['503', 'rate limited or briefly unavailable (a store failure too); see Retry-After'],
  ] as const).map(([status, description]) => [status, { description, content: { 'application/json': { schema: ref('Error') } } }]),
);

function operation(name: string, doc: FunctionDoc, method: 'get' | 'post') {
  const properties: Record<string, Schema> = {};
  for (const p of doc.params ?? []) {
    const [wire, schema] = typeof p === 'string' ? [p, PARAM_BY_NAME[p]] : p;
    if (!schema) throw new Error(`openapi: ${name} names unknown parameter ${wire}`);
    properties[wire] = schema;
  }
  if (doc.settings) Object.assign(properties, JOB_SETTINGS);
  const required = doc.required ?? [];
  const ok = {
    description: 'success',
    content: { 'application/json': { schema: { type: 'object', required: ['status', 'code', 'data'], properties: { status: { const: 'success' }, code: { const: 0 }, data: doc.returns } } } },
  };
  const op: Schema = { operationId: `${name}_${method}`, summary: doc.summary, tags: [name.split('_')[0]], responses: { '200': ok, ...ERROR_RESPONSES } };
  if (method === 'get') {
    op.parameters = Object.entries(properties).map(([n, schema]) => ({ name: n, in: 'query', required: required.includes(n), schema }));
  } else {
    const body = name === 'cron_batch_add'
      ? {
          type: 'object',
          required: ['data'],
          properties: {
            data: { type: 'array', maxItems: 1000, items: { type: 'object', required: ['url'], properties: { ...JOB_SETTINGS, run: PARAMS.run, payload: PARAMS.payload } } },
            idempotencyKey: { type: 'string', minLength: 1, maxLength: 255, description: 'as the X-Idempotency-Key header: 1-255 visible ASCII characters' },
          },
        }
      : { type: 'object', required, properties };
    op.requestBody = { content: { 'application/json': { schema: body }, 'application/x-www-form-urlencoded': { schema: body } } };
    if (name === 'cron_batch_add') {
      const description = 'a retry with the same key and batch completes it without duplicates (1-255 visible ASCII characters, per account)';
      op.parameters = [{ name: 'X-Idempotency-Key', in: 'header', required: false, description, schema: { type: 'string', maxLength: 255 } }];
    }
  }
  return op;
}

/** The whole document. Its version is the API's (v1), which FastCron clients pin, not Tock's release. */
export function openApiDocument() {
  const paths: Record<string, Schema> = {};
  for (const [name, doc] of Object.entries(FUNCTION_DOCS)) {
    paths[`/api/v1/${name}`] = name === 'cron_batch_add' ? { post: operation(name, doc, 'post') } : { get: operation(name, doc, 'get'), post: operation(name, doc, 'post') };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tock API',
      version: '1.0.0',
      description:
        "FastCron-compatible /api/v1. Parameters may come from the query string, a form or JSON body (names match ignoring case and '_'); PUT, PATCH and DELETE are treated as POST. See docs/api.md.",
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { tokenParameter: [] }],
    components: {
      schemas: SCHEMAS,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'the 32-character API token' },
        tokenParameter: { type: 'apiKey', in: 'query', name: 'token', description: 'accepted, but the header keeps the token out of logs' },
      },
    },
    paths,
  };
}
