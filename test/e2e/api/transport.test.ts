import { expect } from 'chai';
import { fails, ok, rawRequest, type ApiClient } from '../../support/api.ts';
import { TEST_TOKEN } from '../../support/embedded.ts';
import { inBothModes } from '../../support/targets.ts';

const BEARER = { authorization: `Bearer ${TEST_TOKEN}` };
const FORM = 'application/x-www-form-urlencoded';
const qs = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();

/** The envelope of a raw answer, checked for shape: JSON, status/code, data or message. */
function envelope(response: { http: number; text: string; json: any; headers: Headers }) {
  expect(response.headers.get('content-type')).to.match(/^application\/json/);
  expect(response.json, response.text).to.be.an('object');
  const { status, code } = response.json;
  if (status === 'success') {
    expect(response.http).to.equal(200);
    expect(code).to.equal(0);
    expect(response.json).to.have.property('data');
  } else {
    expect(status).to.equal('error');
    expect(code).to.be.a('number').and.not.equal(0);
    expect(response.json.message).to.be.a('string');
    expect(response.json).not.to.have.property('data');
  }
  return response.json;
}

inBothModes('transports, encodings, token placements and parameter names', (target) => {
  let api: ApiClient;
  let job: any;
  before(async () => {
    api = target().api;
    job = await ok(api.call('cron_add', { url: 'https://example.com/t', name: 'transport', expression: '0 0 1 1 *' }));
  });

  const data = async (fn: string, init: Parameters<ApiClient['raw']>[1]) => {
    const body = envelope(await api.raw(fn, init));
    expect(body.status, JSON.stringify(body)).to.equal('success');
    return body.data;
  };

  describe('methods and encodings', () => {
    it('GET with the parameters in the query string', async () => {
      const added = await data('cron_add', { method: 'GET', query: qs({ url: 'https://example.com/get', name: 'via get' }), headers: BEARER });
      expect(added).to.include({ url: 'https://example.com/get', name: 'via get' });
      expect(await data('cron_get', { method: 'GET', query: qs({ id: added.id }), headers: BEARER })).to.deep.equal(added);
    });

    it('POST with the parameters in the URL and no body (with and without a Content-Type)', async () => {
      expect((await data('cron_get', { query: qs({ id: job.id }), headers: BEARER })).name).to.equal('transport');
      expect((await data('cron_get', { query: qs({ id: job.id }), headers: { ...BEARER, 'content-type': 'application/json' } })).name).to.equal('transport');
      expect((await data('cron_get', { query: qs({ id: job.id }), headers: { ...BEARER, 'content-type': FORM }, body: '' })).name).to.equal('transport');
    });

    it('POST with a form body', async () => {
      const added = await data('cron_add', { headers: { ...BEARER, 'content-type': FORM }, body: qs({ url: 'https://example.com/form', timeout: 40, notify: 'false', httpHeaders: 'A: 1\r\nB: 2' }) });
      expect(added).to.include({ url: 'https://example.com/form', timeout: 40, notify: false, httpHeaders: 'A: ***\r\nB: ***' });
    });

    it('POST with JSON, also with every value a string', async () => {
      const typed = await data('cron_add', { headers: { ...BEARER, 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://example.com/j', timeout: 41, notify: false, group: null }) });
      expect(typed).to.include({ timeout: 41, notify: false, group: null });
      const strings = await data('cron_add', {
        headers: { ...BEARER, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ url: 'https://example.com/s', timeout: '42', notify: 'false', instances: '1', failureThreshold: '9', run: '0' }),
      });
      expect(strings).to.include({ timeout: 42, notify: false, instances: 1, failureThreshold: 9 });
      expect((await data('cron_edit', { headers: BEARER, body: JSON.stringify({ id: String(strings.id), delay: '2' }) })).delay).to.equal(2);
    });

    it('JSON without a Content-Type, as text/plain, as text/json, and as a form (PHP curl default)', async () => {
      for (const type of [undefined, 'text/plain', 'text/json', FORM, 'application/octet-stream']) {
        const headers: Record<string, string> = { ...BEARER };
        if (type) headers['content-type'] = type;
        const got = await data('cron_get', { headers, body: JSON.stringify({ id: job.id }) });
        expect(got.id, String(type)).to.equal(job.id);
      }
    });

    it('ignores a byte-order mark before a JSON or form body', async () => {
      expect((await data('cron_get', { headers: { ...BEARER, 'content-type': 'application/json' }, body: `\uFEFF${JSON.stringify({ id: job.id })}` })).id).to.equal(job.id);
      expect((await data('cron_get', { headers: { ...BEARER, 'content-type': FORM }, body: `\uFEFFid=${job.id}` })).id).to.equal(job.id);
    });

    it('multipart/form-data (curl -F, PHP arrays in CURLOPT_POSTFIELDS), file fields ignored', async () => {
      const form = new FormData();
      form.set('token', TEST_TOKEN);
      form.set('url', 'https://example.com/multi');
      form.set('timeout', '43');
      form.set('attachment', new Blob(['ignored']), 'file.txt');
      const response = await fetch(`${target().baseUrl}/api/v1/cron_add`, { method: 'POST', body: form });
      const body = (await response.json());
      expect(body.status, JSON.stringify(body)).to.equal('success');
      expect(body.data).to.include({ url: 'https://example.com/multi', timeout: 43 });
    });

    it('PUT, PATCH and DELETE behave as POST', async () => {
      const put = await data('cron_add', { method: 'PUT', headers: BEARER, body: JSON.stringify({ url: 'https://example.com/put' }) });
      expect((await data('cron_edit', { method: 'PATCH', headers: { ...BEARER, 'content-type': FORM }, body: qs({ id: put.id, name: 'patched' }) })).name).to.equal('patched');
      const deleted = await data('cron_delete', { method: 'DELETE', query: qs({ id: put.id }), headers: BEARER });
      expect(deleted).to.include({ id: null, name: 'patched' });
      const other = await data('cron_add', { headers: BEARER, body: JSON.stringify({ url: 'https://example.com/del' }) });
      expect((await data('cron_delete', { method: 'DELETE', headers: { ...BEARER, 'content-type': FORM }, body: qs({ id: other.id }) })).id).to.equal(null);
    });
  });

  describe('token placement', () => {
    it('accepts the token in the header (any case of Bearer), the form body, the JSON body and the query', async () => {
      const id = String(job.id);
      expect((await data('cron_get', { query: qs({ id }), headers: { Authorization: `bearer ${TEST_TOKEN}` } })).id).to.equal(job.id);
      expect((await data('cron_get', { headers: { 'content-type': FORM }, body: qs({ id, token: TEST_TOKEN }) })).id).to.equal(job.id);
      expect((await data('cron_get', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: job.id, token: TEST_TOKEN }) })).id).to.equal(job.id);
      expect((await data('cron_get', { method: 'GET', query: qs({ id, token: TEST_TOKEN }) })).id).to.equal(job.id);
      expect((await data('cron_get', { query: qs({ token: TEST_TOKEN }), headers: { 'content-type': FORM }, body: qs({ id }) })).id).to.equal(job.id);
    });

    it('answers a missing, malformed or unknown token with FC\'s error 11 (HTTP 401)', async () => {
      const expect11 = async (init: Parameters<ApiClient['raw']>[1]) => {
        const body = envelope(await api.raw('cron_get', { query: qs({ id: job.id }), ...init }));
        expect(body).to.deep.equal({ status: 'error', code: 11, message: 'Invalid API token, user not found.' });
      };
      await expect11({});
      await expect11({ headers: { authorization: 'Bearer short' } });
      await expect11({ headers: { authorization: `Bearer ${'z'.repeat(32)}` } });
      await expect11({ headers: { authorization: `Bearer ${TEST_TOKEN}x` } });
      await expect11({ method: 'GET', query: qs({ id: job.id, token: TEST_TOKEN.toLowerCase() }) });
    });
  });

  describe('parameter names and values', () => {
    it('matches names case-insensitively and ignoring "_"; ignores unknown names', async () => {
      const added = await data('cron_add', {
        headers: { ...BEARER, 'content-type': FORM },
        body: qs({ URL: 'https://example.com/lower', httpmethod: 'post', postdata: 'a=1', failure_threshold: 5, NOTIFYEVERY: 3, user_agent: 'UA', callback: 'x', format: 'json', api_version: 1 }),
      });
      expect(added).to.include({ url: 'https://example.com/lower', httpMethod: 'POST', postData: 'a=1', failureThreshold: 5, notifyEvery: 3, userAgent: 'UA' });
    });

    it('lets the exact camelCase spelling win a collision, in either order', async () => {
      const one = await data('cron_add', { headers: BEARER, body: JSON.stringify({ url: 'https://example.com/c1', httpMethod: 'PUT', http_method: 'POST', httpmethod: 'PATCH' }) });
      expect(one.httpMethod).to.equal('PUT');
      const two = await data('cron_add', { headers: BEARER, body: JSON.stringify({ http_method: 'POST', url: 'https://example.com/c2', httpMethod: 'PUT' }) });
      expect(two.httpMethod).to.equal('PUT');
    });

    it('merges the query string and the body; the body wins a conflict', async () => {
      const added = await data('cron_add', { query: qs({ url: 'https://example.com/q', name: 'from query', timeout: 50 }), headers: { ...BEARER, 'content-type': FORM }, body: qs({ name: 'from body' }) });
      expect(added).to.include({ url: 'https://example.com/q', name: 'from body', timeout: 50 });
    });

    it('takes a list of ids as a JSON array, id[]= or id[0]= keys, repeated id= keys, or a comma list', async () => {
      const jobs = await ok<any[]>(api.call('cron_batch_add', { data: [1, 2].map((n) => ({ url: `https://example.com/l${n}` })) }));
      const [a, b] = jobs.map((j) => String(j.id));
      const names = async (init: Parameters<ApiClient['raw']>[1], name: string) => (await data('cron_batch_edit', init)).map((j: any) => [j.id, j.name === name]);
      const expected = [[jobs[0].id, true], [jobs[1].id, true]];
      expect(await names({ headers: BEARER, body: JSON.stringify({ id: [a, b], name: 'n1' }) }, 'n1')).to.deep.equal(expected);
      expect(await names({ headers: { ...BEARER, 'content-type': FORM }, body: `id%5B%5D=${a}&id%5B%5D=${b}&name=n2` }, 'n2')).to.deep.equal(expected);
      expect(await names({ query: `id=${a}&id=${b}&name=n3`, headers: BEARER }, 'n3')).to.deep.equal(expected);
      expect(await names({ query: `id=${a},${b}&name=n4`, headers: BEARER }, 'n4')).to.deep.equal(expected);
      expect(await names({ headers: BEARER, body: JSON.stringify({ id: `${a}, ${b}`, name: 'n5' }) }, 'n5')).to.deep.equal(expected);
      // PHP: http_build_query(['id' => [a, b]]) and json_encode of an array with keys.
      expect(await names({ headers: { ...BEARER, 'content-type': FORM }, body: `id%5B0%5D=${a}&id%5B1%5D=${b}&name=n6` }, 'n6')).to.deep.equal(expected);
      expect(await names({ query: `ID%5B0%5D=${a}&ID%5B1%5D=${b}&name=n7`, headers: BEARER }, 'n7')).to.deep.equal(expected);
      expect(await names({ headers: BEARER, body: JSON.stringify({ id: { 0: a, 1: b }, name: 'n8' }) }, 'n8')).to.deep.equal(expected);
    });

    it('reads booleans as true/false, "true"/"false", 1/0, "1"/"0", on/off, yes/no', async () => {
      for (const [value, expected] of [[true, true], [false, false], ['true', true], ['FALSE', false], [1, true], [0, false], ['1', true], ['0', false], ['on', true], ['off', false], ['yes', true], ['no', false]] as const) {
        expect((await ok(api.call('cron_edit', { id: job.id, notify: value }))).notify, String(value)).to.equal(expected);
      }
    });

    it('takes cron_batch_add data as an array or, from string-only clients, as its JSON text', async () => {
      const added = await data('cron_batch_add', { headers: BEARER, body: JSON.stringify({ DATA: JSON.stringify([{ url: 'https://example.com/b1' }, { URL: 'https://example.com/b2', TimeOut: '33' }]) }) });
      expect(added.map((j: any) => [j.url, j.timeout])).to.deep.equal([['https://example.com/b1', 30], ['https://example.com/b2', 33]]);
    });
  });

  describe('malformed requests and unknown paths', () => {
    it('malformed JSON, or JSON that is not an object, is error 13 (HTTP 400)', async () => {
      for (const body of ['{"url": ', '[1, 2]', '{"id": 1,}', '"text"']) {
        const response = await api.raw('cron_get', { headers: { ...BEARER, 'content-type': 'application/json' }, body });
        expect(envelope(response).code, body).to.equal(13);
        expect(response.http).to.equal(400);
      }
    });

    it('a body over 1 MiB is error 13 (HTTP 413)', async () => {
      const response = await api.raw('cron_add', { headers: { ...BEARER, 'content-type': FORM }, body: `url=https://example.com&name=${'x'.repeat(1024 * 1024 + 10)}` });
      expect(response.http).to.equal(413);
      expect(envelope(response).code).to.equal(13);
    });

    it('an unknown function is error 2 (HTTP 404), before any token check', async () => {
      expect(await fails(api.call('cron_frobnicate', {}), 2)).to.contain('cron_frobnicate');
      for (const fn of ['__proto__', 'constructor', 'toString', 'CRON_LIST']) {
        const response = await api.raw(fn, { headers: BEARER });
        expect(envelope(response).code, fn).to.equal(2);
        expect(response.http).to.equal(404);
      }
    });

    it('paths outside /api/v1/{function} answer an error envelope with 404; /healthz answers ok', async () => {
      // `/` is not among them: it redirects to the dashboard (test/e2e/dashboard.test.ts).
      for (const path of ['/api/v2/cron_list', '/api/v1', '/dashboard/nothing-here', '/api/v1/cron_list/extra']) {
        const response = await rawRequest(target().baseUrl, path, { method: 'GET' });
        expect(response.http, path).to.equal(404);
        expect(response.json).to.include({ status: 'error', code: 2 });
      }
      expect((await rawRequest(target().baseUrl, '/healthz', { method: 'GET' })).json).to.deep.equal({ status: 'ok' });
    });
  });
});
