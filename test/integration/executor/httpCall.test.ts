import { expect } from 'chai';
import { buildRequest } from '../../../services/executor/buildRequest.ts';
import { judge } from '../../../services/executor/judge.ts';
import { TRUNCATION_MARKER } from '../../../services/executor/outputCapture.ts';
import { echo, job, loopbackCaller, spec, startServer } from './httpCallFixtures.ts';

/** httpCall: what a call sends and what it reports, against real servers on loopback. */
describe('httpCall against real local servers', () => {
  const t = loopbackCaller();

  it('sends method, headers and body as built, with Basic auth from the URL', async () => {
    const s = await t.serve(echo);
    const built = buildRequest(
      job({
        httpMethod: 'POST',
        url: `http://ann:p%40ss@127.0.0.1:${s.port}/hook/__cronjob__?t=__timestamp__`,
        httpHeaders: 'X-Custom: yes\r\nX-Time: __timestamp_ms__',
        postData: '{"job":__cronjob__}',
      }),
      { runId: 'run-9', scheduledAt: 1_700_000_000_500, payload: null },
      { userAgent: 'Tock-test/1.0' },
    );
    const result = await t.caller.call(built);
    expect(result.error).to.equal('');
    expect(result.httpStatus).to.equal(200);
    expect(result.output).to.equal('{"ok":true,"method":"POST"}');
    expect(result.downloaded).to.equal(result.output.length);
    expect(result.ip).to.equal('127.0.0.1');
    expect(result.connectFailed).to.equal(false);
    expect(result.executionTime).to.be.a('number').and.to.be.greaterThan(0);
    expect(judge(result, { keyword: '"ok":true', pattern: 'ERROR' })).to.deep.equal({ ok: true, error: '' });

    const [seen] = s.seen;
    expect(seen!.method).to.equal('POST');
    expect(seen!.url).to.equal('/hook/7?t=1700000000');
    expect(seen!.body).to.equal('{"job":7}');
    expect(seen!.headers['authorization']).to.equal(`Basic ${Buffer.from('ann:p@ss').toString('base64')}`);
    expect(seen!.headers['content-type']).to.equal('application/json');
    expect(seen!.headers['user-agent']).to.equal('Tock-test/1.0');
    expect(seen!.headers['x-custom']).to.equal('yes');
    expect(seen!.headers['x-time']).to.equal('1700000000500');
    expect(seen!.headers['x-tock-job-id']).to.equal('7');
    expect(seen!.headers['x-tock-scheduled-time']).to.equal('1700000000');
    expect(seen!.headers['x-tock-run-id']).to.equal('run-9');
  });

  it('sends every method, and a GET payload in the query string', async () => {
    const s = await t.serve(echo);
    for (const httpMethod of ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const) {
      const result = await t.caller.call(buildRequest(job({ httpMethod, url: `${s.base}/m` }), { runId: 'r', scheduledAt: 0, payload: 'a=1' }, { userAgent: 'ua' }));
      expect(result.httpStatus, httpMethod).to.equal(200);
      expect(s.seen.at(-1)!.method).to.equal(httpMethod);
    }
    expect(s.seen[0]!.url).to.equal('/m?a=1');
    expect(s.seen[1]!.body).to.equal('a=1');
    expect(s.seen[1]!.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(s.seen.find((x) => x.method === 'HEAD')!.url).to.equal('/m?a=1');
  });

  it('reuses one keep-alive connection and still reports the address', async () => {
    const s = await t.serve(echo);
    const first = await t.caller.call(spec(`${s.base}/a`));
    // undici frees the connection for reuse one turn after the response ends.
    await new Promise((resolve) => setImmediate(resolve));
    const second = await t.caller.call(spec(`${s.base}/b`));
    expect([first.httpStatus, second.httpStatus]).to.deep.equal([200, 200]);
    expect(s.connections).to.equal(1);
    expect(second.ip).to.equal('127.0.0.1');
  });

  it('attributes the right address to each of many concurrent calls', async () => {
    const a = await t.serve(echo);
    // A second loopback address, so a mix-up between concurrent calls would show.
    const b = await startServer(echo, 0, '127.0.0.2');
    t.cleanup.push(b.close);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => t.caller.call(spec(i % 2 ? b.base : a.base))));
    results.forEach((r, i) => {
      expect(r.httpStatus).to.equal(200);
      expect(r.ip).to.equal(i % 2 ? '127.0.0.2' : '127.0.0.1');
    });
  });

  it('reports a non-2xx status and its output, which judge fails', async () => {
    const s = await t.serve((_req, res) => {
      res.statusCode = 503;
      res.end('busy');
    });
    const result = await t.caller.call(spec(s.base));
    expect(result).to.include({ httpStatus: 503, output: 'busy', downloaded: 4, error: '' });
    expect(judge(result, { keyword: '', pattern: '' })).to.deep.equal({ ok: false, error: 'HTTP 503' });
  });

  it('counts a 5 MiB body and keeps only its first and last 4 KiB', async () => {
    const size = 5 * 1024 * 1024;
    const s = await t.serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(Buffer.alloc(4096, 'H'));
      const middle = Buffer.alloc(64 * 1024, 'M');
      let left = size - 8192;
      const pump = () => {
        while (left > 0) {
          const chunk = middle.subarray(0, Math.min(left, middle.length));
          left -= chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end(Buffer.alloc(4096, 'T'));
      };
      pump();
    });
    const result = await t.caller.call(spec(s.base, { timeoutMs: 10_000 }));
    expect(result.error).to.equal('');
    expect(result.downloaded).to.equal(size);
    expect(result.output).to.equal('H'.repeat(4096) + TRUNCATION_MARKER + 'T'.repeat(4096));
  });

  it('turns bad input and a closed caller into errors, never exceptions', async () => {
    expect((await t.caller.call(spec('not a url'))).error).to.equal('invalid URL "not a url"');
    expect((await t.caller.call(spec('file:///etc/passwd'))).error).to.equal('unsupported URL scheme "file:"');
    const s = await t.serve(echo);
    const bad = await t.caller.call(spec(s.base, { headers: { 'bad header': 'x' } }));
    expect(bad.error).to.not.equal('');
    expect(s.seen).to.have.length(0);
    await t.caller.close();
    expect((await t.caller.call(spec(s.base))).error).to.equal('the executor is shutting down');
  });
});
