import { evolveSigning, NO_SIGNING, signingKeys, type SigningKey, type SigningState } from '../../shared/signing.ts';

/**
 * The planner's slice of the account events: each account's signing secrets, so every due run
 * carries the keys its request is signed with. Pure; only the secrets are kept.
 */
export class AccountSecrets {
  private readonly byAccount = new Map<number, SigningState>();

  /** Applies one event of stream `account-<accountId>`. */
  apply(accountId: number, event: { type: string; data: { signingSecret?: string; at: number } }) {
    const before = this.byAccount.get(accountId) ?? NO_SIGNING;
    const after = evolveSigning(before, event);
    if (after !== before) this.byAccount.set(accountId, after);
  }

  /** The keys that sign a run planned at `now` (the executor drops one that expires before it sends). */
  keysOf(accountId: number, now: number): SigningKey[] {
    const state = this.byAccount.get(accountId);
    return state ? signingKeys(state, now) : [];
  }
}
