import { expect } from 'chai';
import { apiClient, fails, ok, rawRequest } from '../../support/api.ts';
import { embeddedTarget, type ApiTarget } from '../../support/targets.ts';

/**
 * docs/api.md (Requests: rate limit): a token bucket per token (default 1/s, burst 1), HTTP 503 + Retry-After and code 12
 * beyond it; unknown tokens limited per client address; TOCK_RATE_LIMIT configures it, 0 = off.
 * Back-to-back requests take milliseconds, far below the one second a token needs to refill.
 */
describe('rate limit (embedded mode)', function () {
  this.timeout(60_000);

  describe('with TOCK_RATE_LIMIT unset (1 per second, burst 1)', () => {
    let target: ApiTarget;
    before(async () => {
      target = await embeddedTarget({ TOCK_RATE_LIMIT: undefined as unknown as string });
    });
    after(() => target.stop());

    it('answers the second quick call of a token with 503, Retry-After and code 12', async () => {
      const api = await target.newAccount();
      await ok(api.call('account_get'));
      const second = await api.call('account_get');
      expect(second).to.include({ http: 503, status: 'error', code: 12 });
      expect(second.message).to.match(/rate limit/);
      expect(second.headers.get('retry-after')).to.equal('1');
      expect(second).not.to.have.property('data');
    });

    it('tells the budget left after each call (RateLimit-* headers): a client that waits RateLimit-Reset at 0 is not refused', async () => {
      const api = await target.newAccount();
      const first = await api.call('account_get');
      expect(first.headers.get('ratelimit-limit')).to.equal('1');
      expect(first.headers.get('ratelimit-remaining')).to.equal('0');
      expect(first.headers.get('ratelimit-reset')).to.equal('1');
      await new Promise((r) => setTimeout(r, Number(first.headers.get('ratelimit-reset')) * 1000));
      await ok(api.call('account_get'));
    });

    it('limits each token on its own', async () => {
      const one = await target.newAccount();
      const two = await target.newAccount();
      await ok(one.call('account_get'));
      await fails(one.call('account_get'), 12, 503);
      await ok(two.call('account_get'));
    });

    it('counts failed calls too (the limit is on requests)', async () => {
      const api = await target.newAccount();
      await fails(api.call('cron_get', { id: 'x' }), 3);
      await fails(api.call('cron_get', { id: 1 }), 12, 503);
    });

    it('limits unknown tokens per client address: the second bad guess is 503', async () => {
      const guess = apiClient(target.baseUrl, 'A'.repeat(32));
      await fails(guess.call('account_get'), 11, 401);
      const again = await apiClient(target.baseUrl, 'B'.repeat(32)).call('account_get');
      expect(again).to.include({ http: 503, code: 12 });
      expect(again.headers.get('retry-after')).to.equal('1');
      await fails(apiClient(target.baseUrl, '').call('account_get'), 12, 503);
      // A known token is not held back by the address's bad guesses.
      await ok((await target.newAccount()).call('account_get'));
    });
  });

  describe('bodies are not read once the limit is spent', () => {
    let target: ApiTarget;
    before(async () => {
      target = await embeddedTarget({ TOCK_RATE_LIMIT: '1' });
    });
    after(() => target.stop());
    const malformed = (headers: Record<string, string> = {}) =>
      rawRequest(target.baseUrl, '/api/v1/account_get', { headers: { 'content-type': 'application/json', ...headers }, body: '{"token": ' });

    it('a spent token gets 503 before its (malformed) body is parsed', async () => {
      const api = await target.newAccount();
      await ok(api.call('account_get'));
      const answer = await malformed({ authorization: `Bearer ${api.token}` });
      expect(answer.http, answer.text).to.equal(503);
      expect(answer.json).to.include({ code: 12 });
    });

    it('an address spent by bad guesses gets 503 before its (malformed) body is parsed; a good header token still passes', async () => {
      await fails(apiClient(target.baseUrl, 'D'.repeat(32)).call('account_get'), 11, 401);
      const answer = await malformed();
      expect(answer.http, answer.text).to.equal(503);
      expect(answer.json).to.include({ code: 12 });
      await ok((await target.newAccount()).call('account_get'));
    });
  });

  describe('TOCK_TRUST_PROXY', () => {
    const guess = (target: ApiTarget, forwardedFor: string) => apiClient(target.baseUrl, 'E'.repeat(32)).call('account_get', {}, { headers: { 'x-forwarded-for': forwardedFor } });

    it('off (default): X-Forwarded-For is ignored, every request counts for the socket address', async () => {
      const target = await embeddedTarget({ TOCK_RATE_LIMIT: '1' });
      try {
        expect((await guess(target, '203.0.113.1')).code).to.equal(11);
        expect((await guess(target, '203.0.113.2')).code).to.equal(12);
      } finally {
        await target.stop();
      }
    });

    it('on: each client address behind the proxy has its own limit; addresses a client writes further left are ignored', async () => {
      const target = await embeddedTarget({ TOCK_RATE_LIMIT: '1', TOCK_TRUST_PROXY: 'on' });
      try {
        expect((await guess(target, '203.0.113.1')).code).to.equal(11);
        expect((await guess(target, '203.0.113.2')).code).to.equal(11);
        // A forged left part does not give a spent client a fresh address.
        expect((await guess(target, '198.51.100.7, 203.0.113.1')).code).to.equal(12);
      } finally {
        await target.stop();
      }
    });
  });

  describe('configured', () => {
    it('TOCK_RATE_LIMIT=1/3 allows a burst of 3, then 503', async () => {
      const target = await embeddedTarget({ TOCK_RATE_LIMIT: '1/3' });
      try {
        const api = await target.newAccount();
        for (let i = 0; i < 3; i++) await ok(api.call('account_get'));
        const fourth = await api.call('account_get');
        expect(fourth).to.include({ http: 503, code: 12 });
        expect(Number(fourth.headers.get('retry-after'))).to.be.at.least(1);
      } finally {
        await target.stop();
      }
    });

    it('TOCK_RATE_LIMIT=0 turns the limit off, for known and unknown tokens', async () => {
      const target = await embeddedTarget({ TOCK_RATE_LIMIT: '0' });
      try {
        const api = await target.newAccount();
        const results = await Promise.all(Array.from({ length: 30 }, () => api.call('account_get')));
        expect(results.map((r) => r.code)).to.deep.equal(Array(30).fill(0));
        for (let i = 0; i < 5; i++) await fails(apiClient(target.baseUrl, 'C'.repeat(32)).call('account_get'), 11, 401);
      } finally {
        await target.stop();
      }
    });
  });
});
