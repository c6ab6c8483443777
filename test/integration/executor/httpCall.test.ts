// chai 6 ships no type declarations and @types/chai is not installed (yet); expect is `any` until then.
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildRequest, type RunJob } from '../../../services/executor/buildRequest.ts';
import { createHttpCaller, type HttpCaller } from '../../../services/executor/httpCall.ts';
import { judge } from '../../../services/executor/judge.ts';
import { TRUNCATION_MARKER } from '../../../services/executor/outputCapture.ts';
import type { RequestSpec } from '../../../services/executor/buildRequest.ts';
import { freePort } from '../../support/processes.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  port: number;
  base: string;
  seen: Seen[];
  connections: number;
  close(): Promise<void>;
}

/** A real server on 127.0.0.1:0 (by default) that records every request it receives. */
async function startServer(
  handle: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void,
  port = 0,
  host = '127.0.0.1',
): Promise<TestServer> {
  const state: TestServer = { port: 0, base: '', seen: [], connections: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      state.seen.push(seen);
      handle(req, res, seen);
    });
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  state.port = (server.address() as AddressInfo).port;
  state.base = `http://${host}:${state.port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

const echo = (_req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ ok: true, method: seen.method }));
};

const spec = (url: string, over: Partial<RequestSpec> = {}): RequestSpec => ({ method: 'GET', url, headers: {}, body: null, timeoutMs: 5000, ...over });

function job(over: Partial<RunJob>): RunJob {
  return { id: 7, url: '', httpMethod: 'GET', postData: '', httpHeaders: '', username: '', password: '', userAgent: '', timeout: 5, instances: 0, keyword: '', pattern: '', retries: 0, retryBackoff: 10, ...over };
}

describe('httpCall against real local servers', () => {
  let caller: HttpCaller;
  const cleanup: Array<() => Promise<void>> = [];
  const serve = async (handle: Parameters<typeof startServer>[0]) => {
    const s = await startServer(handle);
    cleanup.push(s.close);
    return s;
  };

  beforeEach(() => {
    caller = createHttpCaller({ allowNetworks: ['127.0.0.0/8'], connectRetryDelayMs: 20 });
  });
  afterEach(async () => {
    await caller.close();
    while (cleanup.length) await cleanup.pop()!();
  });

  it('sends method, headers and body as built, with Basic auth from the URL', async () => {
    const s = await serve(echo);
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
    const result = await caller.call(built);
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
    const s = await serve(echo);
    for (const httpMethod of ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const) {
      const result = await caller.call(buildRequest(job({ httpMethod, url: `${s.base}/m` }), { runId: 'r', scheduledAt: 0, payload: 'a=1' }, { userAgent: 'ua' }));
      expect(result.httpStatus, httpMethod).to.equal(200);
      expect(s.seen.at(-1)!.method).to.equal(httpMethod);
    }
    expect(s.seen[0]!.url).to.equal('/m?a=1');
    expect(s.seen[1]!.body).to.equal('a=1');
    expect(s.seen[1]!.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(s.seen.find((x) => x.method === 'HEAD')!.url).to.equal('/m?a=1');
  });

  it('reuses one keep-alive connection and still reports the address', async () => {
    const s = await serve(echo);
    const first = await caller.call(spec(`${s.base}/a`));
    // undici frees the connection for reuse one turn after the response ends.
    await new Promise((resolve) => setImmediate(resolve));
    const second = await caller.call(spec(`${s.base}/b`));
    expect([first.httpStatus, second.httpStatus]).to.deep.equal([200, 200]);
    expect(s.connections).to.equal(1);
    expect(second.ip).to.equal('127.0.0.1');
  });

  it('attributes the right address to each of many concurrent calls', async () => {
    const a = await serve(echo);
    // A second loopback address, so a mix-up between concurrent calls would show.
    const b = await startServer(echo, 0, '127.0.0.2');
    cleanup.push(b.close);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => caller.call(spec(i % 2 ? b.base : a.base))));
    results.forEach((r, i) => {
      expect(r.httpStatus).to.equal(200);
      expect(r.ip).to.equal(i % 2 ? '127.0.0.2' : '127.0.0.1');
    });
  });

  it('reports a non-2xx status and its output, which judge fails', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 503;
      res.end('busy');
    });
    const result = await caller.call(spec(s.base));
    expect(result).to.include({ httpStatus: 503, output: 'busy', downloaded: 4, error: '' });
    expect(judge(result, { keyword: '', pattern: '' })).to.deep.equal({ ok: false, error: 'HTTP 503' });
  });

  describe('redirects', () => {
    const redirector = (target: () => string) => (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => {
      const m = /^\/r(\d{3})$/.exec(req.url ?? '');
      if (m) {
        res.writeHead(Number(m[1]), { location: target() });
        res.end('moved');
        return;
      }
      echo(req, res, seen);
    };

    it('signs each hop at its sending instant over its own method, URL and body (checked by independent HMAC code)', async () => {
      const s: TestServer = await serve(redirector(() => `${s.base}/final?q=1`));
      const secret = 'whsec_test';
      const result = await caller.call(spec(`${s.base}/r303`, { method: 'POST', body: 'a=1', signing: [{ secret, validUntil: 0 }, { secret: 'whsec_gone', validUntil: Date.now() - 1 }] }));
      expect(result.httpStatus).to.equal(200);
      const hops = s.seen.map((h) => {
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(h.headers['x-tock-signature']))!;
        const expected = createHmac('sha256', secret).update(`${t}.${h.method}.${s.base}${h.url}.${h.body}`).digest('hex');
        return [h.method, h.url, v1 === expected, Math.abs(Number(t) - Date.now() / 1000) < 5];
      });
      // The expired key signs nothing; the 303 turned the POST into a GET without a body.
      expect(hops).to.deep.equal([
        ['POST', '/r303', true, true],
        ['GET', '/final?q=1', true, true],
      ]);
    });

    it('follows 301/302/303/307/308 with the method rules browsers apply', async () => {
      const s: TestServer = await serve(redirector(() => `${s.base}/final`));
      const cases: Array<[number, string, string, string]> = [
        [301, 'POST', 'GET', ''],
        [302, 'POST', 'GET', ''],
        [303, 'POST', 'GET', ''],
        [303, 'PUT', 'GET', ''],
        [307, 'POST', 'POST', 'a=1'],
        [308, 'PUT', 'PUT', 'a=1'],
        [301, 'PUT', 'PUT', 'a=1'],
      ];
      for (const [status, method, expectedMethod, expectedBody] of cases) {
        s.seen.length = 0;
        const result = await caller.call(spec(`${s.base}/r${status}`, { method, body: 'a=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }));
        const label = `${status} after ${method}`;
        expect(result.httpStatus, label).to.equal(200);
        expect(result.error, label).to.equal('');
        expect(result.output, label).to.contain(`"method":"${expectedMethod}"`);
        expect(s.seen.map((x) => x.url), label).to.deep.equal([`/r${status}`, '/final']);
        expect(s.seen[1]!.body, label).to.equal(expectedBody);
        expect(s.seen[1]!.headers['content-type'], label).to.equal(expectedBody ? 'application/x-www-form-urlencoded' : undefined);
      }
    });

    it('follows up to 10 hops and fails a loop beyond that', async () => {
      const s = await serve((req, res, seen) => {
        const n = Number(/^\/hop\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
        if (n > 0) {
          res.writeHead(302, { location: `/hop/${n - 1}` });
          return res.end();
        }
        if (req.url === '/loop') {
          res.writeHead(302, { location: '/loop' });
          return res.end();
        }
        echo(req, res, seen);
      });
      const ten = await caller.call(spec(`${s.base}/hop/10`));
      expect(ten.error).to.equal('');
      expect(ten.httpStatus).to.equal(200);
      expect(s.seen).to.have.length(11);

      s.seen.length = 0;
      const loop = await caller.call(spec(`${s.base}/loop`));
      expect(loop.httpStatus).to.equal(302);
      expect(loop.error).to.equal('too many redirects (more than 10)');
      expect(judge(loop, { keyword: '', pattern: '' }).ok).to.equal(false);
      expect(s.seen).to.have.length(11);
    });

    it('does not carry Basic auth to another origin', async () => {
      const other = await serve(echo);
      const s = await serve(redirector(() => `http://localhost:${other.port}/elsewhere`));
      const result = await caller.call(spec(`${s.base}/r302`, { headers: { Authorization: 'Basic eDp5' } }));
      expect(result.httpStatus).to.equal(200);
      expect(s.seen[0]!.headers['authorization']).to.equal('Basic eDp5');
      expect(other.seen[0]!.headers['authorization']).to.equal(undefined);
    });

    it('re-checks the egress policy on every hop', async () => {
      for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/', 'http://10.0.0.1/']) {
        const s = await serve(redirector(() => target));
        const result = await caller.call(spec(`${s.base}/r302`));
        expect(result.error, target).to.equal(`refused by egress policy: ${new URL(target).hostname.replace(/^\[(.*)\]$/, '$1')} is not an allowed target`);
        expect(result.refused?.reason).to.match(/^(cloud metadata|loopback|private)$/);
        expect(result.httpStatus).to.equal(0);
        expect(result.connectFailed).to.equal(false);
      }
    });

    it('follows a redirect without reading a large body to the end', async () => {
      const s = await serve((req, res, seen) => {
        if (req.url !== '/big') return echo(req, res, seen);
        res.writeHead(302, { location: '/final' });
        res.write(Buffer.alloc(256 * 1024, 'r'));
        // never ended: only following early can finish in time
      });
      const result = await caller.call(spec(`${s.base}/big`));
      expect(result.error).to.equal('');
      expect(result.httpStatus).to.equal(200);
      expect(s.seen.map((x) => x.url)).to.deep.equal(['/big', '/final']);
    });

    it('fails a redirect to an unusable location', async () => {
      const s = await serve(redirector(() => 'ftp://example.com/file'));
      const result = await caller.call(spec(`${s.base}/r301`));
      expect(result.error).to.equal('redirect (HTTP 301) to an unsupported URL scheme "ftp:"');
    });
  });

  describe('timeouts', () => {
    it('fails a server that never answers, with a clear error', async () => {
      const s = await serve(() => undefined);
      const result = await caller.call(spec(s.base, { timeoutMs: 1000 }));
      expect(result.httpStatus).to.equal(0);
      expect(result.error).to.equal('timed out after 1 s waiting for the response');
      expect(result.connectFailed).to.equal(false);
      expect(s.seen).to.have.length(1);
    });

    it('keeps what arrived when the body stalls', async () => {
      const s = await serve((_req, res) => {
        res.writeHead(200);
        res.write('partial ');
      });
      const result = await caller.call(spec(s.base, { timeoutMs: 1000 }));
      expect(result).to.include({ httpStatus: 200, output: 'partial ', downloaded: 8, error: 'timed out after 1 s while reading the body' });
      expect(judge(result, { keyword: '', pattern: '' }).ok).to.equal(false);
    });
  });

  it('counts a 5 MiB body and keeps only its first and last 4 KiB', async () => {
    const size = 5 * 1024 * 1024;
    const s = await serve((_req, res) => {
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
    const result = await caller.call(spec(s.base, { timeoutMs: 10_000 }));
    expect(result.error).to.equal('');
    expect(result.downloaded).to.equal(size);
    expect(result.output).to.equal('H'.repeat(4096) + TRUNCATION_MARKER + 'T'.repeat(4096));
  });

  describe('connection failures', () => {
    const resolverFor = (onLookup: (n: number) => Promise<void> | void) => {
      let n = 0;
      return {
        lookups: () => n,
        resolve: (_host: string, _opts: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
          n++;
          Promise.resolve(onLookup(n)).then(
        () => cb(null, [{ address: '127.0.0.1', family: 4 }]),
        (error: Error) => cb(error, []),
      );
        },
      };
    };

    it('retries a refused connection once, and succeeds when the target has come up', async () => {
      const port = await freePort();
      let late: TestServer | undefined;
      // Lookup runs once per connection attempt: the server starts only before the second one.
      const dns = resolverFor(async (n) => {
        if (n === 2) late = await startServer(echo, port);
      });
      const retrying = createHttpCaller({ allowNetworks: ['127.0.0.0/8'], connectRetryDelayMs: 20, resolve: dns.resolve });
      try {
        const result = await retrying.call(spec(`http://target.test:${port}/`));
        expect(result.error).to.equal('');
        expect(result.httpStatus).to.equal(200);
        expect(result.connectFailed).to.equal(false);
        expect(dns.lookups()).to.equal(2);
        expect(late!.seen).to.have.length(1);
      } finally {
        await retrying.close();
        await late?.close();
      }
    });

    it('gives up after the one retry, marking the connect failure', async () => {
      const port = await freePort();
      const dns = resolverFor(() => undefined);
      const retrying = createHttpCaller({ allowNetworks: ['127.0.0.0/8'], connectRetryDelayMs: 20, resolve: dns.resolve });
      try {
        const result = await retrying.call(spec(`http://target.test:${port}/`));
        expect(result.error).to.equal(`connection refused by 127.0.0.1:${port}`);
        expect(result.httpStatus).to.equal(0);
        expect(result.connectFailed).to.equal(true);
        expect(dns.lookups()).to.equal(2);
      } finally {
        await retrying.close();
      }
    });

    it('does not retry an HTTP error', async () => {
      const s = await serve((_req, res) => {
        res.statusCode = 500;
        res.end();
      });
      const result = await caller.call(spec(s.base));
      expect(result.httpStatus).to.equal(500);
      expect(s.seen).to.have.length(1);
    });
  });

  describe('egress guard', () => {
    it('refuses 127.0.0.1 when loopback is not allowed; the server receives nothing', async () => {
      const strict = createHttpCaller({ allowNetworks: [], connectRetryDelayMs: 20 });
      const s = await serve(echo);
      try {
        const result = await strict.call(spec(s.base));
        expect(result.error).to.equal('refused by egress policy: 127.0.0.1 is not an allowed target');
        expect(result).to.include({ httpStatus: 0, ip: '', connectFailed: false, downloaded: 0 });
        expect(result.refused).to.deep.equal({ host: '127.0.0.1', ip: '127.0.0.1', reason: 'loopback' });
        expect(s.connections).to.equal(0);
      } finally {
        await strict.close();
      }
    });

    it('refuses a hostname that resolves to loopback (localhost)', async () => {
      const strict = createHttpCaller({ allowNetworks: [], connectRetryDelayMs: 20 });
      const s = await serve(echo);
      try {
        const result = await strict.call(spec(`http://localhost:${s.port}/`));
        // The tenant learns nothing of how the name resolves: neither the address nor why it is refused.
        expect(result.error).to.equal('refused by egress policy: localhost is not an allowed target');
        expect(result.ip).to.equal('');
        expect(result.refused).to.deep.include({ host: 'localhost', reason: 'loopback' });
        expect(result.refused!.ip).to.match(/^(127\.0\.0\.1|::1)$/);
        expect(result.connectFailed).to.equal(false);
        expect(s.connections).to.equal(0);
      } finally {
        await strict.close();
      }
    });

    it('refuses IPv4-mapped IPv6 spellings of loopback', async () => {
      const strict = createHttpCaller({ allowNetworks: [], connectRetryDelayMs: 20 });
      try {
        const result = await strict.call(spec('http://[::ffff:127.0.0.1]:9/'));
        expect(result.error).to.equal('refused by egress policy: ::ffff:7f00:1 is not an allowed target');
        expect(result.refused).to.deep.equal({ host: '::ffff:7f00:1', ip: '::ffff:7f00:1', reason: 'loopback' });
      } finally {
        await strict.close();
      }
    });
  });

  it('turns bad input and a closed caller into errors, never exceptions', async () => {
    expect((await caller.call(spec('not a url'))).error).to.equal('invalid URL "not a url"');
    expect((await caller.call(spec('file:///etc/passwd'))).error).to.equal('unsupported URL scheme "file:"');
    const s = await serve(echo);
    const bad = await caller.call(spec(s.base, { headers: { 'bad header': 'x' } }));
    expect(bad.error).to.not.equal('');
    expect(s.seen).to.have.length(0);
    await caller.close();
    expect((await caller.call(spec(s.base))).error).to.equal('the executor is shutting down');
  });
});
