import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import { createHttpCaller } from '../../../services/executor/httpCall.ts';
import { judge } from '../../../services/executor/judge.ts';
import { freePort } from '../../support/processes.ts';
import { echo, loopbackCaller, spec, startServer, type TestServer } from './httpCallFixtures.ts';

/** httpCall: targets that never answer, stall, refuse connections or are not allowed. */
describe('httpCall against real local servers', () => {
  const t = loopbackCaller();

  describe('timeouts', () => {
    it('fails a server that never answers, with a clear error', async () => {
      const s = await t.serve(() => undefined);
      const result = await t.caller.call(spec(s.base, { timeoutMs: 1000 }));
      expect(result.httpStatus).to.equal(0);
      expect(result.error).to.equal('timed out after 1 s waiting for the response');
      expect(result.connectFailed).to.equal(false);
      expect(s.seen).to.have.length(1);
    });

    it('keeps what arrived when the body stalls', async () => {
      const s = await t.serve((_req, res) => {
        res.writeHead(200);
        res.write('partial ');
      });
      const result = await t.caller.call(spec(s.base, { timeoutMs: 1000 }));
      expect(result).to.include({ httpStatus: 200, output: 'partial ', downloaded: 8, error: 'timed out after 1 s while reading the body' });
      expect(judge(result, { keyword: '', pattern: '' }).ok).to.equal(false);
    });
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
      const s = await t.serve((_req, res) => {
        res.statusCode = 500;
        res.end();
      });
      const result = await t.caller.call(spec(s.base));
      expect(result.httpStatus).to.equal(500);
      expect(s.seen).to.have.length(1);
    });
  });

  describe('egress guard', () => {
    it('refuses 127.0.0.1 when loopback is not allowed; the server receives nothing', async () => {
      const strict = createHttpCaller({ allowNetworks: [], connectRetryDelayMs: 20 });
      const s = await t.serve(echo);
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
      const s = await t.serve(echo);
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
});
