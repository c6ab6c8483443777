import { expect } from 'chai';
import { parseBody, parseQuery } from '../../../services/gateway/body.ts';
import { canonicalParam, ids, int32, paging, extraRun, runTime, settingsFrom } from '../../../services/gateway/inputs.ts';
import { Params } from '../../../services/gateway/params.ts';
import { AppError, type ErrorKind } from '../../../shared/errors.ts';

/** Params as the gateway builds them: the query, then the body (which wins), with the real canonical names. */
const params = (query: string, body: { text: string; type?: string } = { text: '' }) =>
  new Params([parseQuery(query), parseBody(Buffer.from(body.text), body.type).fields], canonicalParam);
const json = (value: unknown, query = '') => params(query, { text: JSON.stringify(value), type: 'application/json' });

function refused(fn: () => unknown, kind: ErrorKind, message?: string | RegExp) {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'should have thrown').to.be.instanceOf(AppError);
  expect((thrown as AppError).kind).to.equal(kind);
  if (typeof message === 'string') expect((thrown as AppError).message).to.equal(message);
  else if (message) expect((thrown as AppError).message).to.match(message);
}

describe('gateway parameter parsing', () => {
  describe('names', () => {
    it("are folded: case and '_' do not matter", () => {
      for (const q of ['notifyEvery=3', 'notify_every=3', 'NOTIFYEVERY=3', 'Notify_Every=3']) expect(params(q).int('notifyEvery'), q).to.equal(3);
    });
    it('the exact camelCase spelling wins a collision, in either order', () => {
      expect(params('notify_every=1&notifyEvery=2').int('notifyEvery')).to.equal(2);
      expect(params('notifyEvery=2&notify_every=1').int('notifyEvery')).to.equal(2);
      expect(json({ http_method: 'PUT', httpMethod: 'POST' }).str('httpMethod')).to.equal('POST');
    });
    it('the body wins over the query string', () => {
      expect(params('name=fromQuery', { text: 'name=fromBody', type: 'application/x-www-form-urlencoded' }).str('name')).to.equal('fromBody');
      expect(json({ name: 'fromJson' }, 'name=fromQuery&url=u').str('name')).to.equal('fromJson');
      expect(json({ name: 'fromJson' }, 'name=fromQuery&url=u').str('url'), 'what the body lacks comes from the query').to.equal('u');
    });
  });

  describe('coercions', () => {
    it('integers from numbers and numeric strings; empty and null are absent', () => {
      expect(json({ a: 5, b: ' 7 ', c: '', d: null, e: true }).int('a')).to.equal(5);
      const p = json({ b: ' 7 ', c: '', d: null, e: true });
      expect([p.int('b'), p.int('c'), p.int('d'), p.int('e')]).to.deep.equal([7, undefined, undefined, 1]);
    });
    it('a non-integer is refused, naming the parameter', () => {
      refused(() => params('timeout=5.5').int('timeout'), 'INVALID_PARAMETER', 'timeout: must be an integer, got "5.5"');
      refused(() => json({ timeout: 1.5 }).int('timeout'), 'INVALID_PARAMETER', /^timeout: must be an integer/);
      refused(() => params('timeout=1e3').int('timeout'), 'INVALID_PARAMETER');
    });
    it('booleans: true/false, 1/0, on/off, yes/no, any case', () => {
      const p = params('a=TRUE&b=0&c=on&d=No&e=');
      expect([p.bool('a'), p.bool('b'), p.bool('c'), p.bool('d'), p.bool('e')]).to.deep.equal([true, false, true, false, undefined]);
      refused(() => params('notify=maybe').bool('notify'), 'INVALID_PARAMETER', 'notify: must be true or false (also 1/0, on/off, yes/no), got "maybe"');
    });
    it('strings accept numbers and booleans as their text; JSON null clears with strOrClear', () => {
      const p = json({ name: 12, keyword: false, pattern: null });
      expect([p.str('name'), p.str('keyword'), p.str('pattern'), p.strOrClear('pattern')]).to.deep.equal(['12', 'false', undefined, '']);
      refused(() => json({ name: { a: 1 } }).str('name'), 'INVALID_PARAMETER', 'name: must be a string');
    });
    it('repeated keys: the last one wins, as in PHP; a list of objects is refused', () => {
      expect(params('name=a&name=b').str('name')).to.equal('b');
      refused(() => json({ name: [{}, {}] }).str('name'), 'INVALID_PARAMETER', 'name: must be a single value, not a list');
    });
  });

  describe('lists of ids', () => {
    const list = (p: Params) => p.intList('id');
    it('every way clients send them', () => {
      expect(list(params('id=1&id=2'))).to.deep.equal([1, 2]);
      expect(list(params('id[]=1&id[]=2'))).to.deep.equal([1, 2]);
      expect(list(params('id%5B0%5D=1&id%5B1%5D=2')), "PHP's http_build_query: id[0]=1&id[1]=2").to.deep.equal([1, 2]);
      expect(list(params('id=1,2,,3'))).to.deep.equal([1, 2, 3]);
      expect(list(json({ id: [1, '2'] }))).to.deep.equal([1, 2]);
      expect(list(json({ id: { 0: 1, 2: 3 } })), "PHP's json_encode of a list with gaps").to.deep.equal([1, 3]);
      expect(list(params('id=5'))).to.deep.equal([5]);
    });
    it('a bad element is named by its index', () => refused(() => list(params('id=1,x')), 'INVALID_PARAMETER', 'id[1]: must be an integer, got "x"'));
    it('ids(): required, positive (the batch limit is the jobs service\'s)', () => {
      expect(ids(params('id[0]=4&id[1]=5'))).to.deep.equal([4n, 5n]);
      refused(() => ids(params('')), 'MISSING_PARAMETER', 'id: is required (one id or a list of ids)');
      expect(ids(json({ id: Array.from({ length: 1001 }, (_, i) => i + 1) }))).to.have.length(1001);
      refused(() => ids(params('id=3,0')), 'INVALID_PARAMETER', 'id[1]: must be a positive integer, got 0');
    });
  });

  describe('settings (derived from the settings table)', () => {
    it('reads every kind: text, int, bool, optional int, group id', () => {
      expect(settingsFrom(params('url=example.com&timeout=60&notify=off&notify_time=30&group=4&name=n'))).to.deep.equal({
        url: 'example.com',
        timeout: 60,
        notify: false,
        notifyTime: 30,
        group: 4n,
        name: 'n',
      });
    });
    it('absent stays absent; an empty form field of a setting with no empty value is "not given"', () => {
      expect(settingsFrom(params('url=&expression=%20&timezone=&httpMethod=&name=&filter='))).to.deep.equal({ name: '', filter: '' });
    });
    it('JSON null clears: text to "", notifyTime and group to 0', () => {
      expect(settingsFrom(json({ postData: null, notifyTime: null, group: null }))).to.deep.equal({ postData: '', notifyTime: 0, group: 0n });
    });
    it('refuses a negative group and an int beyond int32, naming them', () => {
      refused(() => settingsFrom(params('group=-1')), 'INVALID_PARAMETER', 'group: must be a group id, or 0 for none; got -1');
      refused(() => settingsFrom(params('timeout=2147483648')), 'INVALID_PARAMETER', 'timeout: 2147483648 is out of range');
      expect(int32(params('delay=-2147483647'), 'delay')).to.equal(-2147483647);
    });
  });

  describe('run, time and paging', () => {
    it('run: 1 now, a timestamp later; none when absent or 0', () => {
      expect(extraRun(params('run=1&payload=a%3D1'))).to.deep.equal({ run: 1n, payload: 'a=1' });
      expect(extraRun(params('run=0'))).to.equal(undefined);
      refused(() => extraRun(params('run=253402300800')), 'INVALID_PARAMETER', /^run: must be 1 \(now\) or a Unix timestamp in seconds/);
    });
    it('time: absent is now (0); negative refused', () => {
      expect(runTime(params(''))).to.equal(0n);
      refused(() => runTime(params('time=-1')), 'INVALID_PARAMETER', 'time: must be a Unix timestamp in seconds, got -1');
    });
    it('paging: page from 1, limit up to the maximum', () => {
      expect(paging(params('page=2&limit=50'), 100)).to.deep.equal({ page: 2, limit: 50 });
      expect(paging(params(''), 100)).to.deep.equal({ page: 1, limit: 0 });
      refused(() => paging(params('page=0'), 100), 'INVALID_PARAMETER', /^page: must be from 1/);
      refused(() => paging(params('limit=101'), 100), 'INVALID_PARAMETER', 'limit: must be from 1 to 100, got 101');
    });
  });

  describe('bodies', () => {
    it('JSON by type or by look (text/plain, none, even a declared form)', () => {
      expect(parseBody(Buffer.from('{"a":1}'), 'text/plain').json).to.deep.equal({ a: 1 });
      expect(parseBody(Buffer.from('{"a":1}'), undefined).fields).to.deep.equal({ a: 1 });
      expect(parseBody(Buffer.from('{"a":1}'), 'application/x-www-form-urlencoded').fields).to.deep.equal({ a: 1 });
      expect(parseBody(Buffer.from('\uFEFF{"a":1}'), 'application/json').fields, 'a byte-order mark is dropped').to.deep.equal({ a: 1 });
    });
    it('a declared form that only starts with a bracket stays a form', () => {
      expect(parseBody(Buffer.from('[x]=1'), 'application/x-www-form-urlencoded').fields).to.deep.equal({ '[x]': '1' });
    });
    it('malformed JSON and JSON that is not an object are error 13', () => {
      refused(() => parseBody(Buffer.from('{'), 'application/json'), 'MALFORMED_BODY', /^request body: malformed JSON/);
      refused(() => parseBody(Buffer.from('[1]'), 'application/json'), 'MALFORMED_BODY', 'request body: JSON must be an object of parameters');
    });
    it("multipart (PHP curl's arrays), repeated names add up", () => {
      const text = ['--b', 'Content-Disposition: form-data; name="id[]"', '', '1', '--b', 'Content-Disposition: form-data; name="id[]"', '', '2', '--b--', ''].join('\r\n');
      const fields = parseBody(Buffer.from(text), 'multipart/form-data; boundary=b').fields;
      expect(new Params([fields], canonicalParam).intList('id')).to.deep.equal([1, 2]);
      refused(() => parseBody(Buffer.from(text), 'multipart/form-data'), 'MALFORMED_BODY', 'request body: multipart without a boundary');
    });
    it('an empty body has no fields', () => expect(parseBody(Buffer.from('  '), 'application/json')).to.deep.equal({ fields: {}, json: null }));
  });
});
