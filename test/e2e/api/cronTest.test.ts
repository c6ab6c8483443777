import { expect } from 'chai';
import { ok, rawRequest } from '../../support/api.ts';
import { startTestSystem, TEST_TOKEN } from '../../support/embedded.ts';
import { startTarget } from '../../support/target.ts';
import { waitFor } from '../../support/waitFor.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * cron_test (Tock's): one call of a job's settings by an executor, answered with what it got,
 * through the egress guard and within the account's share of calls like a run, and recorded
 * nowhere: no job, no log entry, no failure counted, no history.
 */
describe('cron_test: a test call before saving', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const hits = (path: string) => target.received.filter((r) => r.url.startsWith(path));

  before(async () => {
    target = await startTarget((r): { status?: number; body?: string; delayMs?: number; headers?: Record<string, string> } => {
      // Echoes what it got, as a careless target might: the answer must not show the secrets.
      if (r.url.startsWith('/echo')) return { body: JSON.stringify({ url: r.url, headers: r.headers }), headers: { 'x-seen-auth': String(r.headers.authorization ?? '') } };
      if (r.url.startsWith('/slow')) return { delayMs: 8000, body: 'late' };
      if (r.url.startsWith('/bad')) return { status: 500, body: 'Internal error: database connection refused' };
      return { status: 201, body: 'hello from the target', headers: { 'x-custom': 'abc' } };
    });
    // One call at a time per account on the executor: the share a second test meets.
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_ACCOUNT_CONCURRENCY: '1' } });
  });
  after(async () => {
    await system?.destroy();
    await target?.close();
  });

  it("calls the URL once with the form's settings and answers status, duration, headers and body", async () => {
    const answer = await ok<any>(system.api.call('cron_test', { url: `${target.url}/probe?x=1`, httpMethod: 'POST', postData: '{"a":1}', timeout: 10 }));
    expect(answer).to.include({ status: 0, httpStatus: 201, error: '', output: 'hello from the target', ip: '127.0.0.1', downloaded: 21, url: `${target.url}/probe?x=1` });
    expect(answer.executionTime).to.be.a('number').greaterThan(0).lessThan(10);
    expect(answer.server).to.be.a('string').not.equal('');
    expect(answer.headers).to.deep.include({ name: 'x-custom', value: 'abc' });
    const [call] = hits('/probe');
    expect(hits('/probe')).to.have.length(1);
    expect(call).to.include({ method: 'POST', body: '{"a":1}' });
    expect(call!.headers).to.include({ 'x-tock-test': '1', 'x-tock-job-id': '0', 'content-type': 'application/json' });
    expect(call!.headers['x-tock-run-id']).to.match(/^test-[0-9a-f-]{36}$/);
    expect(call!.headers['x-tock-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it('judges the answer as a run would be: an error status, a missing keyword, a timeout', async () => {
    expect(await ok<any>(system.api.call('cron_test', { url: `${target.url}/bad` }))).to.include({ status: 1, httpStatus: 500, error: 'HTTP 500', output: 'Internal error: database connection refused' });
    expect(await ok<any>(system.api.call('cron_test', { url: `${target.url}/probe`, keyword: 'goodbye' }))).to.include({ status: 1, httpStatus: 201, error: 'keyword "goodbye" not found in the output' });
    const slow = await ok<any>(system.api.call('cron_test', { url: `${target.url}/slow`, timeout: 5 }));
    expect(slow).to.include({ status: 1, httpStatus: 0 });
    expect(slow.error).to.match(/^timed out after 5 s/);
  });

  it('never answers a secret: URL credentials, password, header values and the Basic token are masked even when the target echoes them', async () => {
    // Every header value of a job is a secret (the API shows them masked): both are masked.
    const headers = 'X-Api-Key: k3y-s3cret-value\nX-Other: another-value';
    const answer = await ok<any>(system.api.call('cron_test', { url: `http://robot:hunter22@${target.url.slice(7)}/echo`, httpHeaders: headers }));
    const call = hits('/echo').at(-1)!;
    // The target did get them.
    expect(call.headers.authorization).to.equal(`Basic ${b64('robot:hunter22')}`);
    expect(call.headers['x-api-key']).to.equal('k3y-s3cret-value');
    const shown = JSON.stringify(answer);
    for (const secret of ['hunter22', 'k3y-s3cret-value', b64('robot:hunter22')]) expect(shown, secret).not.to.contain(secret);
    expect(answer.url).to.equal(`http://***@${target.url.slice(7)}/echo`);
    expect(answer.headers).to.deep.include({ name: 'x-seen-auth', value: 'Basic ***' });
    expect(JSON.parse(answer.output).headers).to.include({ 'x-api-key': '***', 'x-other': '***', authorization: 'Basic ***', 'x-tock-test': '1' });
  });

  it("tests a saved job with changes, using its stored secrets, and changes nothing of it", async () => {
    const job = await ok<any>(system.api.call('cron_add', { url: `${target.url}/echo/saved`, expression: 'manual', name: 'saved', username: 'svc', password: 'st0red-pass', httpHeaders: 'X-Token: t0ken-value' }));
    const history = await ok<any[]>(system.api.call('cron_history', { id: job.id }));
    const answer = await ok<any>(system.api.call('cron_test', { id: job.id, url: `${target.url}/echo/changed`, name: 'renamed' }));
    expect(answer).to.include({ status: 0, httpStatus: 200 });
    const call = hits('/echo/changed').at(-1)!;
    expect(call.headers.authorization).to.equal(`Basic ${b64('svc:st0red-pass')}`);
    expect(call.headers['x-token']).to.equal('t0ken-value');
    expect(call.headers['x-tock-job-id']).to.equal(String(job.id));
    expect(JSON.stringify(answer)).not.to.contain('st0red-pass').and.not.to.contain('t0ken-value');
    expect(hits('/echo/saved')).to.have.length(0);
    const after = await ok<any>(system.api.call('cron_get', { id: job.id }));
    expect(after).to.include({ name: 'saved', url: `${target.url}/echo/saved`, fail: 0 });
    expect(await ok<any[]>(system.api.call('cron_history', { id: job.id }))).to.deep.equal(history);
  });

  it('refuses what a run would not call, naming the parameter, and calls nothing', async () => {
    const before = target.received.length;
    const refused = async (params: Record<string, unknown>) => {
      const r = await system.api.call('cron_test', params);
      expect(r.status, JSON.stringify(params)).to.equal('error');
      return r;
    };
    expect(await refused({ expression: 'manual' })).to.include({ code: 4, message: 'url: is required' });
    expect(await refused({ url: `${target.url}/probe`, expression: 'every banana' })).to.include({ code: 3 });
    expect((await refused({ url: `${target.url}/probe`, expression: 'every banana' })).message).to.match(/^expression: /);
    expect(await refused({ url: 'ftp://example.com/x' })).to.include({ code: 3 });
    expect(await refused({ id: 999_999, name: 'x' })).to.include({ code: 5, message: 'cron job 999999 not found' });
    expect(await refused({ id: 'abc' })).to.include({ code: 3 });
    // The egress policy, exactly as for a run: link-local (cloud metadata) and private addresses.
    expect(await refused({ url: 'http://169.254.169.254/latest/meta-data/' })).to.include({ code: 3, message: 'url: refused by egress policy: 169.254.169.254 is not an allowed target' });
    expect(await refused({ url: 'http://10.1.2.3:8080/admin' })).to.include({ code: 3, message: 'url: refused by egress policy: 10.1.2.3 is not an allowed target' });
    await pause(300);
    expect(target.received.length).to.equal(before);
  });

  it("refuses a test while the account's share of calls is in use, with 503 and Retry-After, like a run past its share", async () => {
    const slow = system.api.call('cron_test', { url: `${target.url}/slow/share`, timeout: 5 });
    await waitFor(() => hits('/slow/share').length === 1, 'the first test call', 5000);
    const second = await rawRequest(system.baseUrl, '/api/v1/cron_test', { query: `url=${encodeURIComponent(`${target.url}/probe/second`)}`, headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
    expect(second.http).to.equal(503);
    expect(second.json).to.include({ status: 'error', code: 12 });
    expect(second.json.message).to.equal("the account's share of calls on the executor is in use (runs or tests in progress); retry in 1 second");
    expect(second.headers.get('retry-after')).to.equal('1');
    expect(hits('/probe/second')).to.have.length(0);
    expect((await slow).status).to.equal('success');
  });

  it('recorded nothing: no job, no log entry, no failure', async () => {
    const jobs = await ok<any[]>(system.api.call('cron_list'));
    expect(jobs.map((j) => j.name)).to.deep.equal(['saved']);
    expect(await ok<any[]>(system.api.call('cron_failures'))).to.deep.equal([]);
    expect(await ok<any[]>(system.api.call('cron_logs', { id: jobs[0].id }))).to.deep.equal([]);
  });
});

describe('cron_test at the default rate limit', function () {
  this.timeout(30_000);
  it('costs a request of the token like any call: a second one at once is refused', async () => {
    const target = await startTarget();
    const system = await startTestSystem({ env: { TOCK_RATE_LIMIT: undefined as unknown as string, TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    try {
      expect((await system.api.call('cron_test', { url: `${target.url}/one` })).status).to.equal('success');
      expect(await system.api.call('cron_test', { url: `${target.url}/two` })).to.include({ status: 'error', code: 12 });
      expect(target.received.map((r) => r.url)).to.deep.equal(['/one']);
    } finally {
      await system.destroy();
      await target.close();
    }
  });
});
