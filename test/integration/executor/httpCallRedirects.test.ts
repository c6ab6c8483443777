import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import type http from 'node:http';
import { judge } from '../../../services/executor/judge.ts';
import { echo, loopbackCaller, spec, type Seen, type TestServer } from './httpCallFixtures.ts';

/** httpCall: following redirects, hop by hop. */
describe('httpCall against real local servers', () => {
  const t = loopbackCaller();

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
      const s: TestServer = await t.serve(redirector(() => `${s.base}/final?q=1`));
      const secret = 'whsec_test';
      const result = await t.caller.call(spec(`${s.base}/r303`, { method: 'POST', body: 'a=1', signing: [{ secret, validUntil: 0 }, { secret: 'whsec_gone', validUntil: Date.now() - 1 }] }));
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
      const s: TestServer = await t.serve(redirector(() => `${s.base}/final`));
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
        const result = await t.caller.call(spec(`${s.base}/r${status}`, { method, body: 'a=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }));
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
      const s = await t.serve((req, res, seen) => {
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
      const ten = await t.caller.call(spec(`${s.base}/hop/10`));
      expect(ten.error).to.equal('');
      expect(ten.httpStatus).to.equal(200);
      expect(s.seen).to.have.length(11);

      s.seen.length = 0;
      const loop = await t.caller.call(spec(`${s.base}/loop`));
      expect(loop.httpStatus).to.equal(302);
      expect(loop.error).to.equal('too many redirects (more than 10)');
      expect(judge(loop, { keyword: '', pattern: '' }).ok).to.equal(false);
      expect(s.seen).to.have.length(11);
    });

    it('does not carry Basic auth to another origin', async () => {
      const other = await t.serve(echo);
      const s = await t.serve(redirector(() => `http://localhost:${other.port}/elsewhere`));
      const result = await t.caller.call(spec(`${s.base}/r302`, { headers: { Authorization: 'Basic eDp5' } }));
      expect(result.httpStatus).to.equal(200);
      expect(s.seen[0]!.headers['authorization']).to.equal('Basic eDp5');
      expect(other.seen[0]!.headers['authorization']).to.equal(undefined);
    });

    it('re-checks the egress policy on every hop', async () => {
      for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/', 'http://10.0.0.1/']) {
        const s = await t.serve(redirector(() => target));
        const result = await t.caller.call(spec(`${s.base}/r302`));
        expect(result.error, target).to.equal(`refused by egress policy: ${new URL(target).hostname.replace(/^\[(.*)\]$/, '$1')} is not an allowed target`);
        expect(result.refused?.reason).to.match(/^(cloud metadata|loopback|private)$/);
        expect(result.httpStatus).to.equal(0);
        expect(result.connectFailed).to.equal(false);
      }
    });

    it('follows a redirect without reading a large body to the end', async () => {
      const s = await t.serve((req, res, seen) => {
        if (req.url !== '/big') return echo(req, res, seen);
        res.writeHead(302, { location: '/final' });
        res.write(Buffer.alloc(256 * 1024, 'r'));
        // never ended: only following early can finish in time
      });
      const result = await t.caller.call(spec(`${s.base}/big`));
      expect(result.error).to.equal('');
      expect(result.httpStatus).to.equal(200);
      expect(s.seen.map((x) => x.url)).to.deep.equal(['/big', '/final']);
    });

    it('fails a redirect to an unusable location', async () => {
      const s = await t.serve(redirector(() => 'ftp://example.com/file'));
      const result = await t.caller.call(spec(`${s.base}/r301`));
      expect(result.error).to.equal('redirect (HTTP 301) to an unsupported URL scheme "ftp:"');
    });
  });
});
