import { expect } from 'chai';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget, type Received } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';
import { nth } from '../support/nth.ts';
import { capture } from '../support/capture.ts';

/**
 * What a receiver does, written here from docs/api.md (Signatures) and not with Tock's code:
 * every v1 in X-Tock-Signature is a hex HMAC-SHA256 keyed with the secret over
 * "<t>.<METHOD>.<url>.<raw body>"; a t older than 5 minutes is a replay.
 */
function verify(req: Received, url: string, secret: string, nowS = Date.now() / 1000): boolean {
  const header = String(req.headers['x-tock-signature'] ?? '');
  const pairs = header.split(',').map((p) => p.split('=') as [string, string]);
  const t = Number(pairs.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || nowS - t > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${req.method}.${url}.${req.body}`).digest();
  return pairs.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

describe('signed job requests end to end (embedded mode, real HTTP target)', function () {
  this.timeout(30_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;

  before(async () => {
    target = await startTarget();
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
  });
  after(async () => {
    await system.destroy();
    await target.close();
  });
  const hits = (path: string) => target.received.filter((r) => r.url.split('?')[0] === path);

  it('account_secret_rotate answers a new secret once; the old one keeps signing during the grace period', async () => {
    const first = await ok<{ secret: string; previousValidUntil: number | null }>(system.api.call('account_secret_rotate'));
    expect(first.secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    // The account was created with a secret, which the rotation put in its grace period.
    expect(first.previousValidUntil).to.be.within(Math.floor(Date.now() / 1000) + 86_400 - 60, Math.floor(Date.now() / 1000) + 86_400 + 1);
    const second = await ok<{ secret: string }>(system.api.call('account_secret_rotate'));
    expect(second.secret).to.not.equal(first.secret);
    const account = await ok<Record<string, unknown>>(system.api.call('account_get'));
    expect(JSON.stringify(account)).to.not.include('whsec_');

    const job: any = await ok(
      system.api.call('cron_add', {
        url: `${target.url}/signed?x=1&y=%C3%A9`,
        expression: '* * * * * *',
        httpMethod: 'POST',
        postData: '{"hello":"wörld"}',
        httpHeaders: 'X-Tock-Signature: forged',
      }),
    );
    const req = nth(await waitFor(() => hits('/signed').length >= 1 && hits('/signed'), 'a signed run', 8000));
    await ok(system.api.call('cron_disable', { id: job.id }));
    const url = `${target.url}${req.url}`;
    expect(req.headers['x-tock-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verify(req, url, second.secret), 'the new secret').to.equal(true);
    expect(verify(req, url, first.secret), 'the previous secret, in its grace period').to.equal(true);
    expect(Math.abs(Number(capture(/t=(\d+)/, String(req.headers['x-tock-signature']))) - req.at / 1000), 't is the sending instant').to.be.below(2);

    expect(verify({ ...req, body: '{"hello":"world"}' }, url, second.secret), 'a tampered body').to.equal(false);
    expect(verify(req, `${target.url}/signed?x=2`, second.secret), 'another URL').to.equal(false);
    expect(verify(req, url, second.secret, Date.now() / 1000 + 301), 'an old timestamp').to.equal(false);

    const history: any[] = await ok(system.api.call('cron_history', { id: job.id }));
    expect(JSON.stringify(history)).to.not.include('whsec_');
  });
});
