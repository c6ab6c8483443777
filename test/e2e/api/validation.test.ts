import { expect } from 'chai';
import { fails, ok, type ApiClient } from '../../support/api.ts';
import { embeddedTarget, storeMark, type ApiTarget } from '../../support/targets.ts';

const long = (n: number) => 'x'.repeat(n);

/** [parameter, bad value, expected code, what the message must say], for docs/api.md (Cron jobs)'s limits. */
const INVALID: [string, unknown, number, RegExp][] = [
  ['url', 'ftp://example.com/file', 3, /http or https/],
  ['url', 'http://', 3, /url/],
  ['url', 'http://exa mple.com', 3, /not a valid URL/],
  ['url', `https://example.com/${long(2100)}`, 3, /at most 2048/],
  ['url', { href: 'https://example.com' }, 3, /string/],
  ['expression', 'every banana', 3, /./],
  ['expression', '61 * * * *', 3, /./],
  ['expression', '0 0 * Jam *', 3, /./],
  ['expression', long(300), 3, /./],
  ['filter', 'hour ==', 3, /./],
  ['filter', "process.exit(1)", 3, /./],
  ['filter', "hour == 'Mon'", 3, /./],
  ['timezone', 'Mars/Olympus_Mons', 3, /./],
  ['timezone', '+05:00', 3, /./],
  ['delay', -1, 3, /0 to 1440/],
  ['delay', 1441, 3, /0 to 1440/],
  ['delay', '1.5', 3, /integer/],
  ['delay', 'soon', 3, /integer/],
  ['timeout', 4, 3, /5 to 7200/],
  ['timeout', 7201, 3, /5 to 7200/],
  ['timeout', 2 ** 40, 3, /timeout/],
  ['instances', -1, 3, /0 to 5/],
  ['instances', 6, 3, /0 to 5/],
  ['notifyEvery', 0, 3, /1 to 100/],
  ['notifyEvery', 101, 3, /1 to 100/],
  ['failureThreshold', 0, 3, /1 to 100/],
  ['failureThreshold', 101, 3, /1 to 100/],
  ['notifyTime', -1, 3, /0 to 86400/],
  ['notifyTime', 86401, 3, /0 to 86400/],
  ['notifyFailureRate', -1, 3, /0 to 100 percent/],
  ['notifyFailureRate', 101, 3, /0 to 100 percent/],
  ['notifyFailureWindow', 0, 3, /1 to 1440 minutes/],
  ['notifyFailureWindow', 1441, 3, /1 to 1440 minutes/],
  ['notifyReminder', -1, 3, /0 to 168 hours/],
  ['notifyReminder', 169, 3, /0 to 168 hours/],
  ['keyword', long(101), 3, /at most 100 characters/],
  ['pattern', long(256), 3, /at most 255 characters/],
  ['name', long(256), 3, /at most 255/],
  ['username', long(256), 3, /at most 255/],
  ['password', long(256), 3, /at most 255/],
  ['userAgent', long(513), 3, /at most 512/],
  ['notifyMatch', long(256), 3, /at most 255/],
  ['postData', long(65537), 3, /at most 65536/],
  ['httpHeaders', 'X-Fine: 1\r\nno colon here', 3, /line 2/],
  ['httpHeaders', 'Bad Name: 1', 3, /line 1/],
  ['httpMethod', 'FETCH', 3, /GET, POST, PUT, PATCH, HEAD, DELETE/],
  ['notify', 'maybe', 3, /true or false/],
  ['notify', [true, { x: 1 }], 3, /single value/],
  ['notifySkipped', 'sometimes', 3, /true or false/],
  ['group', -1, 3, /group id/],
  ['group', 'first', 3, /integer/],
  ['group', 999999, 5, /not found/],
  ['run', 'soon', 3, /integer/],
  ['run', 1e17, 3, /run/],
  ['name', { first: 'a' }, 3, /string/],
];

/** Values at the edge of each limit, all accepted. */
const BOUNDARIES: Record<string, unknown>[] = [
  { timeout: 5, instances: 0, notifyEvery: 1, failureThreshold: 1, delay: 0, notifyTime: 0, notifyFailureRate: 0, notifyFailureWindow: 1, notifyReminder: 0 },
  { timeout: 7200, instances: 5, notifyEvery: 100, failureThreshold: 100, delay: 1440, notifyTime: 86400, notifyFailureRate: 100, notifyFailureWindow: 1440, notifyReminder: 168 },
  { keyword: long(100), pattern: long(255), name: long(255) },
  { timeout: '30', instances: ' 2 ', delay: '+3', notify: 'no' },
];

describe('validation: every parameter with invalid input (embedded mode)', function () {
  this.timeout(60_000);
  let target: ApiTarget;
  let api: ApiClient;
  let job: any;
  before(async () => {
    target = await embeddedTarget();
    api = target.api;
    job = await ok(api.call('cron_add', { url: 'https://example.com/base', expression: '0 0 1 1 *', name: 'base' }));
  });
  after(() => target.stop());

  /** The call fails with `code`, the message names the parameter, and the event store did not move. */
  const rejects = async (fn: string, params: Record<string, unknown>, code: number, name: string, rule: RegExp = /./) => {
    const before = storeMark(target.dataDir);
    const message = await fails(api.call(fn, params), code);
    expect(message, `${fn} ${JSON.stringify(params).slice(0, 80)}`).to.satisfy((m: string) => m.startsWith(`${name}:`) || m.startsWith(`${name}[`));
    expect(message).to.match(rule);
    expect(storeMark(target.dataDir), 'nothing stored').to.deep.equal(before);
    return message;
  };

  describe('cron_add', () => {
    for (const [name, value, code, rule] of INVALID) {
      it(`${name} = ${JSON.stringify(value)?.slice(0, 40)}: error ${code} naming ${name}`, async () => {
        await rejects('cron_add', { url: 'https://example.com/v', [name]: value }, code, name, rule);
      });
    }

    it('url is required: error 4 when missing, empty or blank', async () => {
      await rejects('cron_add', { name: 'no url' }, 4, 'url', /required/);
      await rejects('cron_add', { url: '' }, 4, 'url', /required/);
      await rejects('cron_add', { url: null }, 4, 'url', /required/);
    });

    it('a URL without a scheme gets http://; https is kept', async () => {
      expect((await ok(api.call('cron_add', { url: 'example.com:8080/x?y=1' }))).url).to.equal('http://example.com:8080/x?y=1');
      expect((await ok(api.call('cron_add', { url: 'HTTPS://Example.com/' }))).url).to.match(/^HTTPS:\/\/Example\.com\/$/i);
    });

    it('accepts every limit at its edge', async () => {
      for (const values of BOUNDARIES) await ok(api.call('cron_add', { url: 'https://example.com/edge', ...values }));
    });

    it('a payload with run must fit the payload rules for its method (error 3, nothing stored)', async () => {
      await rejects('cron_add', { url: 'https://example.com/p', run: 1, payload: '{"broken":' }, 3, 'payload', /valid JSON/);
      await rejects('cron_add', { url: 'https://example.com/p', run: 1, payload: '{"a":1}' }, 3, 'payload', /query string/);
      await rejects('cron_add', { url: 'https://example.com/p', run: 1, payload: 'a=1#frag' }, 3, 'payload', /#/);
      await rejects('cron_add', { url: 'https://example.com/p', httpMethod: 'POST', run: 1, payload: 'line\nbreak' }, 3, 'payload');
    });
  });

  describe('cron_edit', () => {
    for (const [name, value, code, rule] of INVALID) {
      it(`${name} = ${JSON.stringify(value)?.slice(0, 40)}: error ${code}, job unchanged`, async () => {
        await rejects('cron_edit', { id: job.id, [name]: value }, code, name, rule);
        expect(await ok(api.call('cron_get', { id: job.id }))).to.deep.equal(job);
      });
    }

    it('an empty url, expression, timezone or httpMethod leaves the value as it is', async () => {
      expect(await ok(api.call('cron_edit', { id: job.id, url: '', expression: '', timezone: '', httpMethod: '' }))).to.deep.equal(job);
    });
  });

  it('answers at once when the input holds broken unicode (lone surrogates from JSON escapes)', async () => {
    await rejects('cron_pause', { id: job.id, for: '\ud800 minutes' }, 3, 'for');
    await rejects('cron_pause', { id: job.id, for: '\u{67e36}\u{f6aba}' }, 3, 'for');
    await rejects('cron_edit', { id: job.id, httpMethod: 'G\udc00T' }, 3, 'httpMethod');
    await rejects('cron_edit', { id: job.id, expression: '\ud83d' }, 3, 'expression');
    await rejects('cron_edit', { id: job.id, timezone: 'Europe/\ud800' }, 3, 'timezone');
    await rejects('cron_add', { url: 'http://\udfff.example.com' }, 3, 'url');
  });

  describe('ids, lists and paging', () => {
    const idFunctions = ['cron_get', 'cron_edit', 'cron_enable', 'cron_disable', 'cron_pause', 'cron_delete', 'cron_run', 'cron_logs', 'cron_show', 'cron_next', 'cron_history',
      'group_get', 'group_edit', 'group_delete', 'group_vanish', 'group_empty', 'group_items', 'cron_group_edit'];
    for (const fn of idFunctions) {
      it(`${fn}: id missing is 4, not an integer or not positive is 3, unknown is 5`, async () => {
        await rejects(fn, {}, 4, 'id', /required/);
        await rejects(fn, { id: '' }, 4, 'id', /required/);
        await rejects(fn, { id: 'abc' }, 3, 'id', /integer/);
        await rejects(fn, { id: '12abc' }, 3, 'id', /integer/);
        await rejects(fn, { id: 1.5 }, 3, 'id', /integer/);
        await rejects(fn, { id: 0 }, 3, 'id', /positive/);
        await rejects(fn, { id: -4 }, 3, 'id', /positive/);
        await rejects(fn, { id: { x: 1 } }, 3, 'id');
        expect(await fails(api.call(fn, { id: 424242 }), 5)).to.contain('424242');
      });
    }

    for (const fn of ['cron_batch_edit', 'cron_batch_delete']) {
      it(`${fn}: ids missing is 4, a bad element is 3 naming it, over 1000 is 7`, async () => {
        await rejects(fn, {}, 4, 'id', /required/);
        await rejects(fn, { id: [] }, 4, 'id', /required/);
        await rejects(fn, { id: [job.id, 'x'] }, 3, 'id[1]', /integer/);
        await rejects(fn, { id: [job.id, -2] }, 3, 'id[1]', /positive/);
        await rejects(fn, { id: Array.from({ length: 1001 }, (_, i) => i + 1) }, 7, 'id', /1000/);
        expect(await fails(api.call(fn, { id: [job.id, 515151] }), 5)).to.contain('515151');
      });
    }

    for (const fn of ['cron_list', 'cron_history', 'group_items', 'cron_logs', 'cron_failures']) {
      it(`${fn}: page and limit must be in range (3)`, async () => {
        const base = fn === 'cron_list' || fn === 'cron_failures' ? {} : { id: fn === 'group_items' ? undefined : job.id };
        if (fn === 'group_items') (base as any).id = (await ok(api.call('group_add', { name: `paging ${fn}` }))).id;
        await rejects(fn, { ...base, page: 0 }, 3, 'page');
        await rejects(fn, { ...base, page: 'two' }, 3, 'page');
        await rejects(fn, { ...base, page: 2 ** 40 }, 3, 'page');
        await rejects(fn, { ...base, limit: 1001 }, 3, 'limit');
        await rejects(fn, { ...base, limit: -1 }, 3, 'limit');
      });
    }

    it('cron_list keyword must be text', async () => {
      await rejects('cron_list', { keyword: { a: 1 } }, 3, 'keyword');
    });
  });

  describe('cron_pause, cron_batch_add', () => {
    it('cron_pause: `for` must be a duration in the future', async () => {
      await rejects('cron_pause', { id: job.id, for: 'next Friday' }, 3, 'for');
      await rejects('cron_pause', { id: job.id, for: 'banana' }, 3, 'for');
      await rejects('cron_pause', { id: job.id, for: '0 minutes' }, 3, 'for');
      await rejects('cron_pause', { id: job.id, for: '-5 minutes' }, 3, 'for');
    });

    it('cron_batch_add: data missing 4, not a list 3, empty 4, element not an object 3, over 1000 is 7, not JSON 3', async () => {
      await rejects('cron_batch_add', {}, 4, 'data');
      await rejects('cron_batch_add', { data: null }, 4, 'data');
      await rejects('cron_batch_add', { data: { url: 'https://example.com' } }, 3, 'data');
      await rejects('cron_batch_add', { data: [] }, 4, 'data');
      await rejects('cron_batch_add', { data: [{ url: 'https://example.com' }, 'https://example.com'] }, 3, 'data[1]');
      await rejects('cron_batch_add', { data: Array.from({ length: 1001 }, () => ({ url: 'https://example.com' })) }, 7, 'data', /1000/);
      const before = storeMark(target.dataDir);
      const form = await api.call('cron_batch_add', { data: '[{"url":"https://example.com"}]' }, { as: 'form' });
      expect(form).to.include({ code: 3, http: 400 });
      expect(form.message).to.match(/^data: .*JSON/);
      expect(storeMark(target.dataDir)).to.deep.equal(before);
    });
  });

  describe('groups and account', () => {
    it('group_add: name required (4), at most 255 (3); priority a whole number 0..1000000 (3)', async () => {
      await rejects('group_add', {}, 4, 'name');
      await rejects('group_add', { name: '   ' }, 4, 'name');
      await rejects('group_add', { name: long(256) }, 3, 'name', /255/);
      await rejects('group_add', { name: 'g', priority: -1 }, 3, 'priority');
      await rejects('group_add', { name: 'g', priority: 'high' }, 3, 'priority');
      await rejects('group_add', { name: 'g', priority: 2 ** 40 }, 3, 'priority');
    });

    it('group_edit: the same rules, group unchanged', async () => {
      const g = await ok(api.call('group_add', { name: 'stays' }));
      await rejects('group_edit', { id: g.id, name: '' }, 4, 'name');
      await rejects('group_edit', { id: g.id, priority: 2 ** 40 }, 3, 'priority');
      expect(await ok(api.call('group_get', { id: g.id }))).to.deep.equal(g);
    });

    it('group_lookup: name required (4)', async () => {
      await rejects('group_lookup', {}, 4, 'name');
    });

    it('cron_group_edit validates its parameters even for an empty group', async () => {
      const g = await ok(api.call('group_add', { name: 'empty' }));
      await rejects('cron_group_edit', { id: g.id, timeout: 1 }, 3, 'timeout');
      await rejects('cron_group_edit', { id: g.id, group: 777777 }, 5, 'group');
    });

    it('account_edit: timezone must be an IANA name (3)', async () => {
      await rejects('account_edit', { timezone: 'Nowhere/Special' }, 3, 'timezone', /IANA/);
      await rejects('account_edit', { timezone: '' }, 3, 'timezone');
      expect((await ok(api.call('account_get'))).timezone).to.equal('UTC');
    });
  });
});
