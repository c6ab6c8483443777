// chai 6 ships no type declarations and @types/chai is not installed (yet); expect is `any` until then.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  appendQuery,
  buildRequest,
  parseHeaderLines,
  replaceKeywords,
  splitUrlCredentials,
  type RunInfo,
  type RunJob,
} from '../../../services/executor/buildRequest.ts';

const UA = 'Mozilla/5.0 (compatible; Tock/1.0; +https://tock.example)';
const SCHEDULED = 1_700_000_000_123; // ms

function job(over: Partial<RunJob> = {}): RunJob {
  return {
    id: 42,
    url: 'https://example.com/hook',
    httpMethod: 'GET',
    postData: '',
    httpHeaders: '',
    username: '',
    password: '',
    userAgent: '',
    timeout: 30,
    instances: 0,
    keyword: '',
    pattern: '',
    retries: 0,
    retryBackoff: 10,
    ...over,
  };
}
const run = (over: Partial<RunInfo> = {}): RunInfo => ({ runId: 'run-1', scheduledAt: SCHEDULED, payload: null, ...over });
const build = (j: Partial<RunJob> = {}, r: Partial<RunInfo> = {}) => buildRequest(job(j), run(r), { userAgent: UA });

/** Header value by case-insensitive name. */
function header(headers: Record<string, string>, name: string): string | undefined {
  const hit = Object.entries(headers).filter(([k]) => k.toLowerCase() === name.toLowerCase());
  expect(hit.length, `at most one ${name} header`).to.be.at.most(1);
  return hit[0]?.[1];
}

describe('buildRequest', () => {
  it('builds a plain GET with the default user agent, no body, timeout in ms', () => {
    const spec = build();
    expect(spec.method).to.equal('GET');
    expect(spec.url).to.equal('https://example.com/hook');
    expect(spec.body).to.equal(null);
    expect(spec.timeoutMs).to.equal(30_000);
    expect(header(spec.headers, 'User-Agent')).to.equal(UA);
    expect(header(spec.headers, 'Content-Type')).to.equal(undefined);
    expect(header(spec.headers, 'Authorization')).to.equal(undefined);
  });

  it('adds the X-Tock headers, which a job header cannot forge', () => {
    const spec = build({ httpHeaders: 'x-tock-run-id: forged\r\nX-Tock-Job-Id: 1' }, { runId: 'abc-123' });
    expect(header(spec.headers, 'X-Tock-Job-Id')).to.equal('42');
    expect(header(spec.headers, 'X-Tock-Scheduled-Time')).to.equal('1700000000');
    expect(header(spec.headers, 'X-Tock-Run-Id')).to.equal('abc-123');
  });

  it('lists for another origin only Tock\'s own headers and its default User-Agent, none of the job\'s', () => {
    const spec = build(
      { httpMethod: 'POST', postData: '{"a":1}', httpHeaders: 'X-Api-Key: k\r\nX-Tock-Run-Id: forged', username: 'u', password: 'p', userAgent: 'mine/1' },
      { runId: 'abc', attempt: 2 },
    );
    expect(spec.anyOriginHeaders).to.deep.equal({
      'User-Agent': UA,
      'X-Tock-Job-Id': '42',
      'X-Tock-Scheduled-Time': '1700000000',
      'X-Tock-Run-Id': 'abc',
      'X-Tock-Attempt': '2',
    });
    expect(header(spec.headers, 'User-Agent')).to.equal('mine/1');
    expect(header(spec.headers, 'X-Api-Key')).to.equal('k');
  });

  describe('headers', () => {
    it('reads CRLF and bare LF lines, trimming values', () => {
      const spec = build({ httpHeaders: 'X-One: 1\r\nX-Two:two  \nX-Three:  a: b' });
      expect(header(spec.headers, 'X-One')).to.equal('1');
      expect(header(spec.headers, 'X-Two')).to.equal('two');
      expect(header(spec.headers, 'X-Three')).to.equal('a: b');
    });

    it('ignores malformed lines', () => {
      expect(parseHeaderLines('no colon\n: no name\nBad Name: x\n folded: x\nGood: yes\n\nX-Ctl: a\u0001b\nX-Wide: \u2603')).to.deep.equal([
        ['Good', 'yes'],
      ]);
    });

    it('keeps an empty value and lets a later line win', () => {
      expect(header(build({ httpHeaders: 'X-Empty:' }).headers, 'X-Empty')).to.equal('');
      expect(header(build({ httpHeaders: 'X-A: 1\r\nx-a: 2' }).headers, 'X-A')).to.equal('2');
    });

    it('drops connection-level headers the client frames itself', () => {
      const spec = build({ httpHeaders: 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\nExpect: 100-continue\r\nX-Kept: 1' });
      expect(Object.keys(spec.headers).map((k) => k.toLowerCase())).to.not.include.members(['content-length', 'transfer-encoding', 'connection', 'expect']);
      expect(header(spec.headers, 'X-Kept')).to.equal('1');
    });
  });

  describe('basic auth', () => {
    const basic = (s: string) => `Basic ${Buffer.from(s, 'utf8').toString('base64')}`;

    it('comes from username and password', () => {
      expect(header(build({ username: 'ann', password: 's3cret' }).headers, 'Authorization')).to.equal(basic('ann:s3cret'));
    });

    it('comes from user:pass@ in the URL, percent-decoded, and leaves the URL', () => {
      const spec = build({ url: 'https://j%C3%B6rg:p%40ss%3Aw@example.com:8443/x?y=1' });
      expect(header(spec.headers, 'Authorization')).to.equal(basic('jörg:p@ss:w'));
      expect(spec.url).to.equal('https://example.com:8443/x?y=1');
    });

    it('prefers the job fields over URL credentials, which are still stripped', () => {
      const spec = build({ url: 'http://u:p@example.com/', username: 'real', password: 'pw' });
      expect(header(spec.headers, 'Authorization')).to.equal(basic('real:pw'));
      expect(spec.url).to.equal('http://example.com/');
    });

    it('replaces an Authorization header line', () => {
      const spec = build({ httpHeaders: 'authorization: Bearer x', username: 'a', password: 'b' });
      expect(header(spec.headers, 'Authorization')).to.equal(basic('a:b'));
    });
  });

  describe('body and payload', () => {
    it('sends postData for POST, PUT and PATCH only', () => {
      for (const httpMethod of ['POST', 'PUT', 'PATCH'] as const) {
        expect(build({ httpMethod, postData: 'a=1' }).body).to.equal('a=1');
      }
      for (const httpMethod of ['GET', 'HEAD', 'DELETE'] as const) {
        expect(build({ httpMethod, postData: 'a=1' }).body).to.equal(null);
      }
    });

    it('sets Content-Type from the body: JSON or form', () => {
      expect(header(build({ httpMethod: 'POST', postData: '{"a":1}' }).headers, 'Content-Type')).to.equal('application/json');
      expect(header(build({ httpMethod: 'POST', postData: 'a=1&b=2' }).headers, 'Content-Type')).to.equal('application/x-www-form-urlencoded');
      expect(header(build({ httpMethod: 'POST', postData: '' }).headers, 'Content-Type')).to.equal(undefined);
    });

    it('keeps a Content-Type the job sets, whatever its case', () => {
      const spec = build({ httpMethod: 'POST', postData: '{"a":1}', httpHeaders: 'content-type: text/plain' });
      expect(header(spec.headers, 'Content-Type')).to.equal('text/plain');
    });

    it('lets a payload replace postData for POST, PUT and PATCH, with its own Content-Type', () => {
      const spec = build({ httpMethod: 'PUT', postData: 'a=1' }, { payload: '{"from":"payload"}' });
      expect(spec.body).to.equal('{"from":"payload"}');
      expect(header(spec.headers, 'Content-Type')).to.equal('application/json');
      expect(spec.url).to.equal('https://example.com/hook');
    });

    it('appends a payload to the URL for GET, HEAD and DELETE, with ? or &', () => {
      expect(build({ httpMethod: 'GET' }, { payload: 'a=1' }).url).to.equal('https://example.com/hook?a=1');
      expect(build({ httpMethod: 'DELETE', url: 'https://example.com/h?x=0' }, { payload: 'a=1' }).url).to.equal('https://example.com/h?x=0&a=1');
      expect(build({ httpMethod: 'HEAD', url: 'https://example.com/h?' }, { payload: 'a=1' }).url).to.equal('https://example.com/h?a=1');
      expect(build({ httpMethod: 'GET' }, { payload: 'a=1' }).body).to.equal(null);
    });

    it('inserts the payload before a fragment', () => {
      expect(appendQuery('http://h/p#top', 'a=1')).to.equal('http://h/p?a=1#top');
      expect(appendQuery('http://h/p?x=1&', 'a=1')).to.equal('http://h/p?x=1&a=1');
      expect(appendQuery('http://h/p', '')).to.equal('http://h/p');
    });
  });

  describe('keywords', () => {
    it('replaces __timestamp_ms__ before __timestamp__, and __cronjob__', () => {
      expect(replaceKeywords('__timestamp_ms__|__timestamp__|__cronjob__', 7, SCHEDULED)).to.equal('1700000000123|1700000000|7');
    });

    it('replaces them in the URL, headers, body and payload', () => {
      const post = build({
        httpMethod: 'POST',
        url: 'https://example.com/__cronjob__?t=__timestamp__',
        httpHeaders: 'X-Time: __timestamp_ms__',
        postData: 'id=__cronjob__&t=__timestamp__',
      });
      expect(post.url).to.equal('https://example.com/42?t=1700000000');
      expect(header(post.headers, 'X-Time')).to.equal('1700000000123');
      expect(post.body).to.equal('id=42&t=1700000000');
      const get = build({ httpMethod: 'GET' }, { payload: 'ms=__timestamp_ms__' });
      expect(get.url).to.equal('https://example.com/hook?ms=1700000000123');
    });
  });

  describe('user agent', () => {
    it("uses the job's own user agent over a header line and the default", () => {
      expect(header(build({ userAgent: 'MyBot/2', httpHeaders: 'User-Agent: line' }).headers, 'User-Agent')).to.equal('MyBot/2');
    });
    it('keeps a User-Agent header line when the job field is unset', () => {
      expect(header(build({ httpHeaders: 'user-agent: line/1' }).headers, 'User-Agent')).to.equal('line/1');
    });
  });

  it('falls back to 30 s and GET for nonsense values', () => {
    const spec = buildRequest({ ...job(), timeout: Number.NaN, httpMethod: 'TRACE' as never }, run(), { userAgent: UA });
    expect(spec.timeoutMs).to.equal(30_000);
    expect(spec.method).to.equal('GET');
  });

  it('leaves an unparseable URL for the caller to report', () => {
    expect(splitUrlCredentials('not a url')).to.deep.equal({ url: 'not a url', username: '', password: '' });
    expect(build({ url: 'not a url' }).url).to.equal('not a url');
  });

  it('never throws, and its headers are always sendable', () => {
    const methods = fc.constantFrom<RunJob['httpMethod']>('GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE');
    fc.assert(
      fc.property(
        fc.record({ url: fc.string(), postData: fc.string(), httpHeaders: fc.string(), username: fc.string(), password: fc.string(), userAgent: fc.string(), httpMethod: methods }),
        fc.option(fc.string(), { nil: null }),
        fc.string(),
        (fields, payload, runId) => {
          const spec = build(fields, { payload, runId });
          for (const [name, value] of Object.entries(spec.headers)) {
            expect(name).to.match(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/);
            expect(value).to.match(/^[\t\x20-\x7e\x80-\xff]*$/);
          }
        },
      ),
    );
  });
});
