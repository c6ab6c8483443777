import { createHash } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import type { Clients } from './functions.ts';
import type { Params } from './params.ts';
import { RateLimitError } from './rateLimit.ts';

const INVALID = 'Invalid API token, user not found.';

/** docs/api.md (Account): `Authorization: Bearer`, or `token` in the body or the query. */
export function extractToken(authorization: string, params: Params): string | undefined {
  return bearerToken(authorization) ?? params.str('token')?.trim();
}

export const bearerToken = (authorization: string) => /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];

type Limiter = { take(key: string): number };

/**
 * Resolves the token to its account. Unknown tokens are limited per client address (so guessing
 * is slow), known ones per token: `limitKey` is the token's bucket.
 */
export async function authenticate(jobs: Clients['jobs'], token: string | undefined, address: string, byAddress: Limiter, byToken: Limiter) {
  const refuse = () => {
    const wait = byAddress.take(address);
    if (wait) throw new RateLimitError(wait);
    return new AppError('UNAUTHENTICATED', INVALID);
  };
  if (!token || !/^[A-Za-z0-9]{32}$/.test(token)) throw refuse();
  const tokenHash = createHash('sha256').update(token).digest('hex');
  let account;
  try {
    account = await jobs.authenticate({ tokenHash });
  } catch (error) {
    if (error instanceof AppError && error.kind === 'UNAUTHENTICATED') throw refuse();
    throw error;
  }
  const wait = byToken.take(tokenHash);
  if (wait) throw new RateLimitError(wait);
  return { account, limitKey: tokenHash, tokenHash };
}
