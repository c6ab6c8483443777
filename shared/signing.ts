import { createHmac, randomBytes } from 'node:crypto';

/**
 * Tock's two signatures. Both travel in the one header `X-Tock-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256>` (receivers look for that name), but they sign different text with different keys:
 *
 * - a job call (signJobCall): `<t>.<METHOD>.<url>.<body>`, keyed with the account's signing
 *   secret, since the method and URL of a call are the job's and must not be replayable elsewhere;
 * - a notification webhook (signWebhook): `<t>.<body>`, keyed with the channel's secret, since the
 *   channel's URL is fixed and the body says everything.
 *
 * A notification webhook also carries the Standard Webhooks headers (standardWebhookHeaders), so a
 * receiver can verify it with that specification's libraries instead of code of its own.
 *
 * docs/api.md and docs/notifications.md give each formula to receivers. Pure: the clock is an
 * argument.
 */

/** After a rotation the previous secret still signs (a second `v1=`) this long, so receivers can switch over. */
export const SIGNING_SECRET_GRACE_MS = 24 * 3600_000;

export const SIGNATURE_HEADER = 'X-Tock-Signature';

/** 32 random bytes; the whole string, prefix included, is the HMAC key. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** A secret that signs, until `validUntil` (ms; 0: no end). */
export interface SigningKey {
  secret: string;
  validUntil: number;
}

/** An account's secrets as its events say: the current one, and the one it replaced while in grace. */
export interface SigningState {
  current: string | null;
  previous: SigningKey | null;
}

/**
 * The signing part of an account's event fold, shared by the jobs service (which owns accounts)
 * and the planner (which hands the secrets to executors). The secret is always the one field
 * `signingSecret` of the event, so it can be wrapped at rest as a unit.
 */
export function evolveSigning(state: SigningState, event: { type: string; data: { signingSecret?: string; at: number } }): SigningState {
  if (event.type === 'AccountCreated') return { current: event.data.signingSecret ?? null, previous: null };
  if (event.type !== 'SigningSecretRotated' || !event.data.signingSecret) return state;
  // A second rotation within the grace period ends the oldest secret at once: two at most sign.
  const previous = state.current ? { secret: state.current, validUntil: event.data.at + SIGNING_SECRET_GRACE_MS } : null;
  return { current: event.data.signingSecret, previous };
}

export const NO_SIGNING: SigningState = Object.freeze({ current: null, previous: null });

/** The keys a request sent at `now` is signed with: none (unsigned) for an account that never had a secret. */
export function signingKeys(state: SigningState, now: number): SigningKey[] {
  const keys: SigningKey[] = [];
  if (state.current) keys.push({ secret: state.current, validUntil: 0 });
  if (state.previous && now < state.previous.validUntil) keys.push(state.previous);
  return keys;
}

/** The exact text a job call signs: `<t>.<METHOD>.<url>.` followed by the body bytes (none for no body). */
export const signedPrefix = (t: number, method: string, url: string) => `${t}.${method}.${url}.`;

/**
 * X-Tock-Signature of a job call sent at `nowMs`: over `<t>.<METHOD>.<url>.<body>`, one `v1=` per
 * account key still valid then (newest first), or null when there is none.
 */
export function signJobCall(keys: readonly SigningKey[], request: { method: string; url: string; body: string | null }, nowMs: number): string | null {
  const valid = keys.filter((k) => k.secret && (k.validUntil === 0 || nowMs < k.validUntil));
  if (!valid.length) return null;
  const t = Math.floor(nowMs / 1000);
  const prefix = signedPrefix(t, request.method, request.url);
  const body = request.body ?? '';
  const v1 = valid.map((k) => `v1=${createHmac('sha256', k.secret).update(prefix).update(body).digest('hex')}`);
  return [`t=${t}`, ...v1].join(',');
}

/** A channel's signing secret as Standard Webhooks writes one: `whsec_` and 32 random bytes in standard base64. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The HMAC key of a channel secret under Standard Webhooks: the bytes of the base64 after `whsec_`.
 * Channels created before the prefix existed hold bare base64url; Node's base64 decoder reads both
 * alphabets, so such a secret gives the same bytes its standard form does.
 */
export const webhookKeyBytes = (secret: string): Buffer => Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');

/** A channel secret in the form Standard Webhooks libraries take (`whsec_` and standard base64), whatever form it was shown in. */
export const standardWebhookSecret = (secret: string) => `whsec_${webhookKeyBytes(secret).toString('base64')}`;

/**
 * X-Tock-Signature of a notification webhook sent at `nowMs`: over `<t>.<body>`, one `v1=` per
 * secret (newest first), each keyed with the whole secret string as it was shown. A receiver
 * recomputes the HMAC over the timestamp, a dot and the raw body, compares in constant time,
 * accepts any `v1` that matches, and refuses old timestamps (replays).
 */
export function signWebhook(secrets: readonly string[], body: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  return [`t=${t}`, ...secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`)].join(',');
}

/**
 * The Standard Webhooks headers of a notification webhook sent at `nowMs`: `webhook-id` (the same
 * for every attempt of one message), `webhook-timestamp` (seconds) and `webhook-signature`, one
 * `v1,<base64>` per secret (newest first, space-separated) over `<id>.<timestamp>.<body>`, keyed
 * with the secret's bytes (webhookKeyBytes).
 */
export function standardWebhookHeaders(secrets: readonly string[], id: string, body: string, nowMs: number): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const t = Math.floor(nowMs / 1000);
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', webhookKeyBytes(secret)).update(`${id}.${t}.${body}`).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': signatures.join(' ') };
}
