import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { buildRequest, type RunJob } from '../../../services/executor/buildRequest.ts';
import { createHttpCaller, type HttpCaller } from '../../../services/executor/httpCall.ts';
import { judge } from '../../../services/executor/judge.ts';
import { makeTestPki } from '../../support/certs.ts';
import { startTarget, type Received } from '../../support/target.ts';

type Target = Awaited<ReturnType<typeof startTarget>>;

const SECRET_HEADERS = 'X-Api-Key: key-123\r\nCookie: session=abc';
const BASIC = `Basic ${Buffer.from('ann:pw').toString('base64')}`;

function job(over: Partial<RunJob>): RunJob {
  return {
    id: 7,
    url: '',
    httpMethod: 'POST',
    postData: '{"secret":"body"}',
    httpHeaders: SECRET_HEADERS,
    username: 'ann',
    password: 'pw',
    userAgent: 'job-agent/1',
    timeout: 5,
    instances: 0,
    keyword: '',
    pattern: '',
    retries: 0,
    retryBackoff: 10,
    ...over,
  };
}

const run = { runId: 'run-1', scheduledAt: 1_700_000_000_000, payload: null };
const build = (over: Partial<RunJob>) => buildRequest(job(over), run, { userAgent: 'Tock/test' });

/** A target that answers `/r<status>?to=<url>` with that redirect, and anything else with 200. */
const redirecting = (req: Received) => {
  const m = /^\/r(\d{3})\?to=(.+)$/.exec(req.url);
  return m ? { status: Number(m[1]), headers: { location: decodeURIComponent(m[2]!) }, body: 'moved' } : { body: 'final' };
};
const hop = (from: Target, status: number, to: string) => `${from.url}/r${status}?to=${encodeURIComponent(to)}`;

/** What no request to another origin may carry: anything the job set, its credentials, its body. */
function expectNothingOfTheJob(seen: Received, label: string) {
  for (const name of ['x-api-key', 'cookie', 'authorization', 'content-type']) expect(seen.headers[name], `${label}: ${name}`).to.equal(undefined);
  expect(seen.headers['user-agent'], label).to.equal('Tock/test');
  expect(seen.body, label).to.equal('');
  // Tock's own headers still say which run this is, so the target can de-duplicate.
  expect(seen.headers['x-tock-run-id'], label).to.equal('run-1');
  expect(seen.headers['x-tock-job-id'], label).to.equal('7');
}

describe('redirects: a job\'s secrets go only where the job points', () => {
  let caller: HttpCaller;
  let a: Target;
  let b: Target;
  const pki = makeTestPki('redirects');
  before(async () => {
    a = await startTarget(redirecting);
    b = await startTarget(redirecting);
  });
  after(async () => {
    await a.close();
    await b.close();
  });
  beforeEach(() => {
    caller = createHttpCaller({ allowNetworks: ['127.0.0.0/8'], connectRetryDelayMs: 20, ca: [readFileSync(pki.ca, 'utf8')] });
    a.received.length = 0;
    b.received.length = 0;
  });
  afterEach(() => caller.close());

  it('same origin: 301, 302, 303, 307 and 308 keep every header the job set; the method follows the redirect rules', async () => {
    const cases: Array<[number, string, string]> = [
      [301, 'GET', ''],
      [302, 'GET', ''],
      [303, 'GET', ''],
      [307, 'POST', '{"secret":"body"}'],
      [308, 'POST', '{"secret":"body"}'],
    ];
    for (const [status, method, body] of cases) {
      a.received.length = 0;
      const result = await caller.call(build({ url: hop(a, status, `${a.url}/final`) }));
      const label = `same-origin ${status}`;
      expect(result.error, label).to.equal('');
      expect(result.httpStatus, label).to.equal(200);
      const [first, second] = a.received;
      expect(first!.headers['x-api-key'], label).to.equal('key-123');
      expect(second, label).to.include({ method, url: '/final', body });
      expect(second!.headers['x-api-key'], label).to.equal('key-123');
      expect(second!.headers['cookie'], label).to.equal('session=abc');
      expect(second!.headers['authorization'], label).to.equal(BASIC);
      expect(second!.headers['user-agent'], label).to.equal('job-agent/1');
    }
  });

  it('another origin after 301, 302 and 303: a GET without any header the job set, credentials or body', async () => {
    for (const status of [301, 302, 303]) {
      for (const httpMethod of ['POST', 'GET'] as const) {
        b.received.length = 0;
        const result = await caller.call(build({ httpMethod, url: hop(a, status, `${b.url}/final`) }));
        const label = `cross-origin ${status} after ${httpMethod}`;
        expect(result.error, label).to.equal('');
        expect(result.httpStatus, label).to.equal(200);
        expect(b.received, label).to.have.length(1);
        expect(b.received[0], label).to.include({ method: 'GET', url: '/final' });
        expectNothingOfTheJob(b.received[0]!, label);
      }
    }
  });

  it('another origin after 307 and 308: a GET goes without the job\'s headers; a body is never resent there', async () => {
    for (const status of [307, 308]) {
      b.received.length = 0;
      const get = await caller.call(build({ httpMethod: 'GET', url: hop(a, status, `${b.url}/final`) }));
      expect(get.error, `${status} GET`).to.equal('');
      expect(b.received[0], `${status} GET`).to.include({ method: 'GET', url: '/final' });
      expectNothingOfTheJob(b.received[0]!, `${status} GET`);

      b.received.length = 0;
      const post = await caller.call(build({ url: hop(a, status, `${b.url}/final`) }));
      expect(b.received, `${status} POST`).to.have.length(0);
      expect(post.httpStatus).to.equal(status);
      expect(judge(post, job({}))).to.deep.equal({
        ok: false,
        error: `redirect (HTTP ${status}) to another origin (${b.url}) not followed: it would resend the request body there`,
      });
    }
  });

  it('credentials in the job\'s URL and in the Location never reach another origin', async () => {
    const port = new URL(a.url).port;
    const result = await caller.call(build({ username: '', password: '', url: `http://u:p@127.0.0.1:${port}/r302?to=${encodeURIComponent(`${b.url}/final`)}` }));
    expect(result.error).to.equal('');
    expect(a.received[0]!.headers['authorization']).to.equal(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expectNothingOfTheJob(b.received[0]!, 'userinfo');

    // A relative Location on the same origin keeps the headers but puts no userinfo in the URL.
    a.received.length = 0;
    const relative = await caller.call(build({ httpMethod: 'GET', url: hop(a, 302, '/final') }));
    expect(relative.error).to.equal('');
    expect(a.received.map((r) => r.url)).to.deep.equal([`/r302?to=${encodeURIComponent('/final')}`, '/final']);
  });

  it('a headers-stripped hop stays stripped when a later redirect comes back to the job\'s origin', async () => {
    const back = `${b.url}/r302?to=${encodeURIComponent(`${a.url}/final`)}`;
    const result = await caller.call(build({ httpMethod: 'GET', url: hop(a, 302, back) }));
    expect(result.error).to.equal('');
    expect(a.received.map((r) => r.url).at(-1)).to.equal('/final');
    expectNothingOfTheJob(a.received.at(-1)!, 'back on the first origin');
  });

  describe('over https', () => {
    let secure: Target;
    before(async () => {
      secure = await startTarget(redirecting, { tls: { key: readFileSync(pki.key), cert: readFileSync(pki.cert) } });
    });
    after(() => secure.close());
    beforeEach(() => {
      secure.received.length = 0;
    });

    it('refuses a redirect from https to plain http, even to the same host, with a clear error', async () => {
      for (const to of [`${b.url}/final`, `http://127.0.0.1:${new URL(secure.url).port}/final`]) {
        b.received.length = 0;
        secure.received.length = 0;
        const result = await caller.call(build({ httpMethod: 'GET', url: hop(secure, 302, to) }));
        expect(secure.received, to).to.have.length(1);
        expect(secure.received[0]!.headers['x-api-key']).to.equal('key-123');
        expect(b.received, to).to.have.length(0);
        expect(result.httpStatus).to.equal(302);
        expect(judge(result, job({})).error).to.equal(`redirect (HTTP 302) from https to plain http (${new URL(to).origin}) refused: it would send the request unencrypted`);
      }
    });

    it('keeps the job\'s headers on an https redirect to the same origin', async () => {
      const result = await caller.call(build({ url: hop(secure, 307, `${secure.url}/final`) }));
      expect(result.error).to.equal('');
      expect(secure.received[1]).to.include({ method: 'POST', url: '/final', body: '{"secret":"body"}' });
      expect(secure.received[1]!.headers['x-api-key']).to.equal('key-123');
    });
  });
});
