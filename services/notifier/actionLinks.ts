import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DerivedKeys } from '../../shared/crypto/derive.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { WrongExpectedRevisionError } from '../../shared/eventStore/eventStore.ts';
import type { ActionLinks, LinkAction } from '../../shared/notify/index.ts';

/** What a link may do. */
export const LINK_ACTIONS: readonly LinkAction[] = ['pause1h', 'run', 'logs', 'silence'];
/** How long a link works after its notification was sent. */
export const LINK_TTL_MS = 24 * 3600_000;

export interface LinkClaims {
  accountId: number;
  jobId: number;
  action: LinkAction;
  /** ms */
  expiresAt: number;
  /** The link's unique id: what spending it records. */
  nonce: string;
}

/**
 * valid; used (an acting link already spent); expired; invalid (forged, altered, malformed, signed
 * with a key this notifier does not have). Nothing more is said of a link that is not valid.
 */
export type LinkState = 'valid' | 'used' | 'expired' | 'invalid';

export interface LinkAnswer {
  state: LinkState;
  claims?: LinkClaims;
}

/** Where a spent link is recorded: one stream per link, created by its first use only. */
export const linkStream = (nonce: string) => `actionlink-${nonce}`;

const b64 = (b: Buffer) => b.toString('base64url');
// The MAC covers the key id and the claims, under a label of its own.
const mac = (key: Buffer, kid: string, payload: string) => createHmac('sha256', key).update(`tock-action-link.${kid}.${payload}`).digest();

/**
 * Action links: `<kid>.<claims>.<mac>` in base64url, HMAC-SHA256 under a key derived from the
 * secret key for this purpose alone. The claims name the account, the job, the one action, the
 * expiry and a random id. An acting link is spent by an append to its own stream that expects no
 * stream: on any replica, of two uses only the first succeeds.
 */
export function createActionLinks(options: { keys: DerivedKeys; publicUrl: string; store: EventStore; ttlMs?: number }) {
  const { keys, store } = options;
  const base = options.publicUrl.replace(/\/+$/, '');
  const ttl = options.ttlMs ?? LINK_TTL_MS;

  const mint = (accountId: number, jobId: number, action: LinkAction, now: number): string => {
    const claims = { a: accountId, j: jobId, k: action, e: Math.floor((now + ttl) / 1000), n: b64(randomBytes(16)) };
    const payload = b64(Buffer.from(JSON.stringify(claims)));
    return `${keys.current}.${payload}.${b64(mac(keys.keys.get(keys.current)!, keys.current, payload))}`;
  };

  const read = (token: string): LinkClaims | undefined => {
    const parts = token.split('.');
    if (parts.length !== 3 || token.length > 400) return undefined;
    const [kid, payload, sent] = parts as [string, string, string];
    const key = keys.keys.get(kid);
    if (!key || !/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]{43}$/.test(sent)) return undefined;
    const given = Buffer.from(sent, 'base64url');
    if (!timingSafeEqual(given, mac(key, kid, payload))) return undefined;
    try {
      const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a: number; j: number; k: LinkAction; e: number; n: string };
      if (!Number.isSafeInteger(c.a) || !Number.isSafeInteger(c.j) || !LINK_ACTIONS.includes(c.k) || !Number.isSafeInteger(c.e) || !/^[A-Za-z0-9_-]{22}$/.test(c.n)) return undefined;
      return { accountId: c.a, jobId: c.j, action: c.k, expiresAt: c.e * 1000, nonce: c.n };
    } catch {
      return undefined;
    }
  };

  const used = async (nonce: string) => (await store.readStream(linkStream(nonce), { maxCount: 1 })).length > 0;

  return {
    /** The four links of one job, each a page of the gateway's: `<TOCK_PUBLIC_URL>/a/<token>`. */
    linksFor(accountId: number, jobId: number, now: number): ActionLinks {
      const url = (action: LinkAction) => `${base}/a/${mint(accountId, jobId, action, now)}`;
      return { pause1h: url('pause1h'), run: url('run'), logs: url('logs'), silence: url('silence') };
    },

    /** What a link is, without spending it (a GET of its page). */
    async check(token: string, now: number): Promise<LinkAnswer> {
      const claims = read(token);
      if (!claims) return { state: 'invalid' };
      if (now >= claims.expiresAt) return { state: 'expired' };
      if (claims.action !== 'logs' && (await used(claims.nonce))) return { state: 'used' };
      return { state: 'valid', claims };
    },

    /** Spends an acting link: `valid` for its first use only. A logs link is read-only and is never spent. */
    async use(token: string, now: number): Promise<LinkAnswer> {
      const claims = read(token);
      if (!claims || claims.action === 'logs') return { state: 'invalid' };
      if (now >= claims.expiresAt) return { state: 'expired' };
      try {
        await store.appendToStream(linkStream(claims.nonce), [{ type: 'ActionLinkUsed', data: { accountId: claims.accountId, jobId: claims.jobId, action: claims.action, at: now } }], {
          expectedRevision: 'no_stream',
        });
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError) return { state: 'used' };
        throw error;
      }
      return { state: 'valid', claims };
    },
  };
}

export type ActionLinksService = ReturnType<typeof createActionLinks>;
