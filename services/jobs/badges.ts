import { randomBytes } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import type { Commands } from './commands.ts';
import type { JobLookups } from './jobReads.ts';
import type { JobEntry, JobsView } from './jobsView.ts';

/** 24 random bytes: 192 bits, 32 characters of base64url, so a badge URL cannot be guessed or enumerated. */
export const newBadgeToken = () => randomBytes(24).toString('base64url');
const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface Badge {
  token: string;
  /** When it was issued, ms. */
  at: number;
}

/**
 * Status badges (docs/api.md, cron_badge): one per job at most, named by a random token. The token
 * is sealed in the job's stream like its secrets and opened only here, for its owner and for the
 * view's index; revoking it (or deleting the job) ends the URL at once, and a new badge has a new
 * token.
 */
export function createBadges(view: JobsView, commands: Commands, account: (id: number) => unknown, { liveJob }: JobLookups) {
  return {
    /** The job's badge, issued first when it has none (asking again answers the same one). */
    async issueBadge(accountId: number, id: number): Promise<Badge> {
      account(accountId);
      liveJob(accountId, id);
      const held = view.badgeOf(accountId, id);
      if (held) return held;
      const result = await commands.job({ type: 'IssueBadge', id, accountId, token: newBadgeToken() });
      await commands.settle([result.position]);
      const issued = view.badgeOf(accountId, id);
      if (!issued) throw new Error(`the badge of cron job ${id} is missing from the view after it was issued`);
      return issued;
    },

    /** Ends the job's badge; a job without one is left as it is. Answers whether there was one. */
    async revokeBadge(accountId: number, id: number): Promise<boolean> {
      account(accountId);
      liveJob(accountId, id);
      if (!view.badgeOf(accountId, id)) return false;
      const result = await commands.job({ type: 'RevokeBadge', id, accountId });
      await commands.settle([result.position]);
      return true;
    },

    /** The job a badge URL names, by the hash of its token (no account: the token is the credential). */
    badgeJob(tokenHash: string): JobEntry {
      const entry = SHA256_HEX.test(tokenHash) ? view.jobByBadgeHash(tokenHash) : undefined;
      if (!entry) throw new AppError('NOT_FOUND', 'no such badge');
      return entry;
    },
  };
}
