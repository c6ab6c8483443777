import { expect } from 'chai';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { accountDecider, type AccountEvent } from '../../services/jobs/account.ts';
import { Webhook } from 'standardwebhooks';
import {
  SIGNING_SECRET_GRACE_MS,
  newSigningSecret,
  newWebhookSecret,
  signJobCall,
  signWebhook,
  signingKeys,
  standardWebhookHeaders,
  standardWebhookSecret,
  webhookKeyBytes,
} from '../../shared/signing.ts';

/**
 * A receiver's check written from the documented format only (not with Tock's signing code):
 * some v1 is the HMAC-SHA256, keyed with `secret`, of "<t>.<METHOD>.<url>.<body>", and t is at
 * most 5 minutes old at `nowS`.
 */
function verifies(header: string, secret: string, method: string, url: string, body: string, nowS: number): boolean {
  const parts = header.split(',').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || nowS - t > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${method}.${url}.${body}`).digest();
  return parts.some(([k, v]) => k === 'v1' && v !== undefined && Buffer.from(v, 'hex').length === 32 && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

const T0 = Date.UTC(2030, 0, 1);
const request = { method: 'POST', url: 'https://example.com/hook?x=1', body: '{"a":1}' };

const fold = (events: AccountEvent[]) => events.reduce(accountDecider.evolve, accountDecider.initialState())!;
const created = (signingSecret?: string): AccountEvent => ({
  type: 'AccountCreated',
  data: { id: 1, name: 'a', timezone: 'UTC', tokenHash: 'h', jobLimit: 0, at: T0, ...(signingSecret ? { signingSecret } : {}) },
});
const rotated = (signingSecret: string, at: number): AccountEvent => ({ type: 'SigningSecretRotated', data: { signingSecret, at } });

describe('signed job requests (shared/signing)', () => {
  it('a secret is whsec_ and 32 random bytes, new every time', () => {
    const a = newSigningSecret();
    expect(a).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).to.have.length(32);
    expect(newSigningSecret()).to.not.equal(a);
  });

  it('the signature verifies with independent code; a tampered body, URL or method, or an old timestamp, does not', () => {
    const secret = newSigningSecret();
    const header = signJobCall([{ secret, validUntil: 0 }], request, T0)!;
    expect(header).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);
    const now = T0 / 1000;
    expect(verifies(header, secret, 'POST', request.url, request.body, now)).to.equal(true);
    expect(verifies(header, secret, 'POST', request.url, '{"a":2}', now)).to.equal(false);
    expect(verifies(header, secret, 'POST', 'https://example.com/hook?x=2', request.body, now)).to.equal(false);
    expect(verifies(header, secret, 'PUT', request.url, request.body, now)).to.equal(false);
    expect(verifies(header, newSigningSecret(), 'POST', request.url, request.body, now)).to.equal(false);
    expect(verifies(header, secret, 'POST', request.url, request.body, now + 301)).to.equal(false);
  });

  it('a request without a body signs "<t>.<METHOD>.<url>." (nothing after the last dot)', () => {
    const secret = 'whsec_x';
    const header = signJobCall([{ secret, validUntil: 0 }], { method: 'GET', url: 'http://a.test/', body: null }, T0)!;
    expect(verifies(header, secret, 'GET', 'http://a.test/', '', T0 / 1000)).to.equal(true);
  });

  it('an account without a secret (created before signing existed) sends unsigned requests until its first rotation', () => {
    const old = fold([created()]);
    expect(signJobCall(signingKeys(old.signing, T0), request, T0)).to.equal(null);
    const first = fold([created(), rotated('whsec_new', T0 + 1000)]);
    expect(signingKeys(first.signing, T0 + 2000)).to.deep.equal([{ secret: 'whsec_new', validUntil: 0 }]);
  });

  it('after a rotation the old secret also signs during the grace period, and not after it (injected clock)', () => {
    const at = T0 + 60_000;
    const account = fold([created('whsec_old'), rotated('whsec_new', at)]);
    const during = at + SIGNING_SECRET_GRACE_MS - 1000;
    const after = at + SIGNING_SECRET_GRACE_MS;
    const sentDuring = signJobCall(signingKeys(account.signing, during), request, during)!;
    expect(sentDuring.split(',').filter((p) => p.startsWith('v1='))).to.have.length(2);
    expect(verifies(sentDuring, 'whsec_new', 'POST', request.url, request.body, during / 1000)).to.equal(true);
    expect(verifies(sentDuring, 'whsec_old', 'POST', request.url, request.body, during / 1000)).to.equal(true);
    // Keys handed to an executor before the end of the grace are judged at the instant of sending.
    const sentAfter = signJobCall(signingKeys(account.signing, during), request, after)!;
    expect(sentAfter.split(',').filter((p) => p.startsWith('v1='))).to.have.length(1);
    expect(verifies(sentAfter, 'whsec_new', 'POST', request.url, request.body, after / 1000)).to.equal(true);
    expect(verifies(sentAfter, 'whsec_old', 'POST', request.url, request.body, after / 1000)).to.equal(false);
  });

  it('a second rotation within the grace period ends the oldest secret at once', () => {
    const account = fold([created('whsec_1'), rotated('whsec_2', T0 + 1000), rotated('whsec_3', T0 + 2000)]);
    expect(signingKeys(account.signing, T0 + 3000).map((k) => k.secret)).to.deep.equal(['whsec_3', 'whsec_2']);
  });
});

describe('webhook signature (shared/signing signWebhook)', () => {
  it('signs "<t>.<body>" with the channel secret, so a job call\'s formula does not verify it', () => {
    const secret = 'channel-secret';
    const header = signWebhook([secret], request.body, T0);
    const t = T0 / 1000;
    expect(header).to.equal(`t=${t},v1=${createHmac('sha256', secret).update(`${t}.${request.body}`).digest('hex')}`);
    expect(verifies(header, secret, request.method, request.url, request.body, t), 'the job-call formula').to.equal(false);
    expect(signJobCall([{ secret, validUntil: 0 }], request, T0), 'the two formulas differ on the same body').to.not.equal(header);
  });

  it('signs with every secret given, newest first, one v1= each', () => {
    const t = T0 / 1000;
    const v1 = (secret: string) => createHmac('sha256', secret).update(`${t}.${request.body}`).digest('hex');
    expect(signWebhook(['new', 'old'], request.body, T0)).to.equal(`t=${t},v1=${v1('new')},v1=${v1('old')}`);
  });
});

describe('Standard Webhooks headers (shared/signing standardWebhookHeaders), checked with the npm standardwebhooks library', () => {
  const body = '{"id":12,"status":1,"message":"fails"}';
  const id = 'msg_5b1e4c1a-2f0e-4d8e-9a57-0c3b9f3f2d10_7';

  it('a new channel secret is whsec_ and 32 random bytes in standard base64, which the library takes as it is', () => {
    const secret = newWebhookSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhookKeyBytes(secret)).to.have.length(32);
    expect(newWebhookSecret()).to.not.equal(secret);
    expect(() => new Webhook(secret)).to.not.throw();
  });

  it('verifies with the library; a changed body, id or timestamp, or another secret, does not', () => {
    const secret = newWebhookSecret();
    const now = Date.now();
    const headers = standardWebhookHeaders([secret], id, body, now);
    expect(headers['webhook-id']).to.equal(id);
    expect(headers['webhook-timestamp']).to.equal(String(Math.floor(now / 1000)));
    expect(headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, headers)).to.deep.equal(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('fails', 'okay'), headers)).to.throw('No matching signature found');
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': `${id}x` })).to.throw('No matching signature found');
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(Math.floor(now / 1000) - 1) })).to.throw('No matching signature found');
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).to.throw('No matching signature found');
    // The library refuses a timestamp more than 5 minutes old: a replay.
    expect(() => new Webhook(secret).verify(body, standardWebhookHeaders([secret], id, body, now - 600_000))).to.throw('Message timestamp too old');
  });

  it('with two secrets (a rotation\'s overlap) the signature holds two space-separated entries, and either secret verifies', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const headers = standardWebhookHeaders([current, previous], id, body, Date.now());
    expect(headers['webhook-signature'].split(' ').map((s) => s.slice(0, 3))).to.deep.equal(['v1,', 'v1,']);
    expect(() => new Webhook(current).verify(body, headers)).to.not.throw();
    expect(() => new Webhook(previous).verify(body, headers)).to.not.throw();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).to.throw('No matching signature found');
  });

  it('a secret shown before the whsec_ form (bare base64url) keys the same bytes; its whsec_ form verifies with the library', () => {
    // 0xfb bytes give "+" and "/" in standard base64, "-" and "_" in base64url: the library refuses the latter.
    const legacy = Buffer.alloc(32, 0xfb).toString('base64url');
    expect(legacy).to.match(/[-_]/);
    expect(() => new Webhook(legacy)).to.throw(/incorrect characters/);
    expect(webhookKeyBytes(legacy)).to.deep.equal(Buffer.alloc(32, 0xfb));
    const standard = standardWebhookSecret(legacy);
    expect(standard).to.equal(`whsec_${Buffer.alloc(32, 0xfb).toString('base64')}`);
    expect(standardWebhookSecret(standard), 'a whsec_ secret is already in that form').to.equal(standard);
    const headers = standardWebhookHeaders([legacy], id, body, Date.now());
    expect(() => new Webhook(standard).verify(body, headers)).to.not.throw();
  });
});
