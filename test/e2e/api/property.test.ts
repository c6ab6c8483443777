import { expect } from 'chai';
import fc from 'fast-check';
import { HTTP_OF_CODE, ok, rawRequest, type ApiClient, type RawInit } from '../../support/api.ts';
import { TEST_TOKEN } from '../../support/embedded.ts';
import { embeddedTarget, storeMark, type ApiTarget } from '../../support/targets.ts';

const FUNCTIONS = [
  'cron_list', 'cron_get', 'cron_add', 'cron_edit', 'cron_enable', 'cron_disable', 'cron_pause', 'cron_delete', 'cron_run', 'cron_logs', 'cron_show',
  'cron_failures', 'cron_next', 'cron_history', 'cron_rollback', 'cron_batch_add', 'cron_batch_edit', 'cron_batch_delete', 'cron_group_edit', 'group_list', 'group_get',
  'group_lookup', 'group_add', 'group_edit', 'group_delete', 'group_vanish', 'group_empty', 'group_items', 'account_get', 'account_edit',
  'cron_badge', 'cron_badge_revoke', 'account_calendar',
];
const NAMES = [
  'id', 'url', 'expression', 'filter', 'delay', 'timezone', 'timeout', 'instances', 'username', 'password', 'httpMethod', 'postData', 'httpHeaders',
  'userAgent', 'notify', 'notifyEvery', 'notifyMatch', 'notifyTime', 'failureThreshold', 'keyword', 'pattern', 'group', 'name', 'run', 'payload',
  'page', 'limit', 'for', 'time', 'data', 'priority', 'token', 'version', 'versions',
];

/** A parameter name as clients spell it: exact, lower-cased, snake_case, with [] , or unknown. */
const nameArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...NAMES) },
  fc.constantFrom(...NAMES).map((n) => n.toLowerCase()),
  fc.constantFrom(...NAMES).map((n) => n.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)),
  fc.constantFrom('id[]', 'id[0]', '__proto__', 'constructor', 'toString', 'hasOwnProperty'),
  fc.string({ maxLength: 12 }),
);

const hostileText = fc.constantFrom(
  '', ' ', '0', '-1', '1e9', '1.5', 'NaN', 'Infinity', '9'.repeat(30), 'true', 'null', '[]', '{}', '{', '[1,', '%00', '\u0000', '\r\n', '\u202e',
  'http://', 'example.com', 'https://example.com/x', 'ftp://x', 'javascript:alert(1)', '* * * * *', '0 0 1 1 *', 'manual', '@1', '15 minutes',
  "hour == 'x'", 'Europe/London', 'Mars/Base', 'GET', 'post', 'a=1&b=2', '{"a":1}', '1 hour', '-5 days', 'R R * * *', '../../etc/passwd',
  "'; DROP TABLE events; --", '__timestamp__', 'x'.repeat(17_000),
);

const leaf = fc.oneof(
  fc.integer(),
  fc.integer({ min: -3, max: 60 }),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 63), 1e300, 0.5, Number.MAX_SAFE_INTEGER),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  hostileText,
);
const valueArb = fc.oneof(
  { weight: 5, arbitrary: leaf },
  fc.array(leaf, { maxLength: 4 }),
  fc.dictionary(fc.constantFrom(...NAMES), leaf, { maxKeys: 4 }),
  fc.array(fc.dictionary(nameArb, leaf, { maxKeys: 5 }), { maxLength: 3 }),
);

/** Values a real client would send, so that many requests get past validation and change things. */
const PLAUSIBLE: Record<string, unknown[]> = {
  url: ['https://example.com/p', 'example.com/q', 'http://127.0.0.1:9/x'],
  expression: ['manual', '0 0 1 1 *', '15 minutes', '@daily', 'R 3 * * *'],
  filter: ['', "weekday != 'Sun'", 'hour > 3'],
  timezone: ['UTC', 'Europe/Berlin', 'America/New_York'],
  timeout: [5, 30, '60', 7200],
  delay: [0, 1, '10'],
  instances: [0, 1, 5],
  httpMethod: ['GET', 'post', 'PUT'],
  notify: [true, false, 'yes', 0],
  notifyEvery: [1, '2', 100],
  failureThreshold: [1, 20, '100'],
  name: ['job', 'Reports', ''],
  keyword: ['', 'OK'],
  run: [0, 1],
  payload: ['a=1', '{"a":1}'],
  page: [1, 2, '1'],
  limit: [1, 10, 1000],
  for: ['1 hour', '2 days', ''],
  time: [0, 4102444800],
  priority: [0, 5],
  version: [1, 2, '1'],
  versions: [true, 1],
  hours: [1, 24, '3'],
  data: [[{ url: 'https://example.com/b1' }, { url: 'example.com/b2', expression: 'manual' }], [{ url: 'https://example.com/b3', timeout: 4 }]],
};
const plausibleArb = fc.dictionary(
  fc.constantFrom(...Object.keys(PLAUSIBLE)),
  fc.nat().map((n) => n),
  { maxKeys: 5 },
).map((picked) => Object.fromEntries(Object.entries(picked).map(([k, n]) => [k, PLAUSIBLE[k]![n % PLAUSIBLE[k]!.length]])));

type Transport = 'json' | 'form' | 'get' | 'post-query' | 'text-json' | 'delete';
const requestArb = fc.record({
  fn: fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...FUNCTIONS) }, fc.constantFrom('cron_nope', 'CRON_LIST', '__proto__', '%2e%2e', 'x'.repeat(300))),
  params: fc.tuple(plausibleArb, fc.dictionary(nameArb, valueArb, { maxKeys: 4 })).map(([plausible, hostile]) => ({ ...plausible, ...hostile })),
  transport: fc.constantFrom<Transport>('json', 'form', 'get', 'post-query', 'text-json', 'delete'),
  token: fc.constantFrom('own', 'own', 'own', 'other', 'none', 'bad', 'param'),
  /** Which id is sent: one of ours, one of the other account's, or whatever the generator said. */
  idFrom: fc.constantFrom('own', 'own', 'foreign', 'as is'),
});

/** Form and query encodings carry only text: arrays as repeated keys, objects as JSON text. */
function formEncode(params: Record<string, unknown>): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : [value]) out.append(key, v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  return out.toString();
}

describe('property: random and hostile parameter sets never break the gateway (embedded mode)', function () {
  this.timeout(120_000);
  let target: ApiTarget;
  let other: ApiClient;
  const ids = { own: [] as number[], foreign: [] as number[] };

  before(async () => {
    target = await embeddedTarget();
    other = await target.newAccount();
    const own = await ok<any[]>(target.api.call('cron_batch_add', { data: Array.from({ length: 20 }, (_, i) => ({ url: `https://example.com/own${i}`, expression: 'manual' })) }));
    const foreign = await ok<any[]>(other.call('cron_batch_add', { data: Array.from({ length: 5 }, (_, i) => ({ url: `https://example.com/f${i}`, expression: 'manual' })) }));
    const ownGroup = await ok(target.api.call('group_add', { name: 'own' }));
    const foreignGroup = await ok(other.call('group_add', { name: 'theirs' }));
    ids.own = [...own.map((j) => j.id), ownGroup.id];
    ids.foreign = [...foreign.map((j) => j.id), foreignGroup.id];
  });
  after(() => target.stop());

  it('answers every request with a JSON envelope below HTTP 500, and stores nothing for a failure', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, fc.nat(), async (req, pick) => {
        const params: Record<string, unknown> = { ...req.params };
        if (req.idFrom !== 'as is') {
          const pool = ids[req.idFrom];
          params.id = pool[pick % pool.length];
        }
        const token = { own: TEST_TOKEN, other: other.token, none: undefined, bad: 'Z'.repeat(32), param: TEST_TOKEN }[req.token];
        const headers: Record<string, string> = {};
        if (token && req.token !== 'param') headers.authorization = `Bearer ${token}`;
        if (req.token === 'param') params.token = token;
        const init: RawInit = { headers };
        switch (req.transport) {
          case 'json':
            headers['content-type'] = 'application/json';
            init.body = JSON.stringify(params);
            break;
          case 'text-json':
            headers['content-type'] = 'text/plain';
            init.body = JSON.stringify(params);
            break;
          case 'form':
            headers['content-type'] = 'application/x-www-form-urlencoded';
            init.body = formEncode(params);
            break;
          case 'get':
            init.method = 'GET';
            init.query = formEncode(params);
            break;
          case 'post-query':
            init.query = formEncode(params);
            break;
          case 'delete':
            init.method = 'DELETE';
            init.query = formEncode(params);
            break;
        }
        const shown = `${req.transport} ${req.fn} ${JSON.stringify(params).slice(0, 400)}`;
        const before = storeMark(target.dataDir);
        const response = await rawRequest(target.baseUrl, `/api/v1/${req.fn}`, init);
        expect(response.http, `${shown}\n${response.text.slice(0, 300)}`).to.be.below(500);
        const body = response.json;
        expect(body, `${shown}\n${response.text.slice(0, 300)}`).to.be.an('object');
        expect(['success', 'error']).to.include(body.status);
        if (body.status === 'success') {
          expect(response.http).to.equal(200);
          expect(body.code).to.equal(0);
          expect(body).to.have.property('data');
          // New jobs and groups join the pool, so later requests act on them (deletes drain it).
          if (req.token === 'own' || req.token === 'param') {
            for (const item of Array.isArray(body.data) ? body.data : [body.data]) if (typeof item?.id === 'number' && item.id > 0) ids.own.push(item.id);
          }
          return;
        }
        expect(body.code, shown).to.be.a('number').and.not.equal(0);
        expect(body.message, shown).to.be.a('string').and.not.equal('');
        expect(body, shown).not.to.have.property('data');
        if (body.code === 13) expect([400, 413]).to.include(response.http);
        else expect(response.http, `${shown}: ${body.message}`).to.equal(HTTP_OF_CODE[body.code]);
        expect(storeMark(target.dataDir), `a failed request stored nothing: ${shown}: ${body.message}`).to.deep.equal(before);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 600) },
    );
  });

  it('still serves both accounts normally afterwards', async () => {
    await ok(target.api.call('account_get'));
    await ok(other.call('cron_list'));
  });
});
