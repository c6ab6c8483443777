import { AppError } from '../../shared/errors.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { newSigningSecret } from '../../shared/signing.ts';
import { accountDecider, hashToken, isWellFormedToken, newToken, type Account, type AccountEvent } from './account.ts';
import type { Commands } from './commands.ts';
import type { JobsView } from './jobsView.ts';

const unauthenticated = () => new AppError('UNAUTHENTICATED', 'Invalid API token, user not found.');

/** Accounts: authentication, the account functions of the API, and the operator's commands. */
export function createAccountService(store: EventStore, view: JobsView, commands: Commands) {
  /** The account as its own stream says right now: the view may lag another process's write. */
  const current = async (id: number): Promise<Account | null> => {
    const events = await store.readStream<AccountEvent['data']>(`account-${id}`);
    return events.reduce((state, e) => accountDecider.evolve(state, { type: e.type, data: e.data } as AccountEvent), accountDecider.initialState());
  };

  const command = async (c: Parameters<Commands['account']>[0]): Promise<Account> => {
    const result = await commands.account(c);
    await view.waitFor(result.position);
    return result.state!;
  };

  /** A live account of the view, or error 11 (for calls already authenticated by the gateway). */
  const account = (accountId: number): Account => {
    const found = view.account(accountId);
    if (!found || found.disabled) throw unauthenticated();
    return found;
  };

  return {
    account,

    /**
     * Exact, also when the CLI changed the account from another process a moment ago: a token the
     * view does not know makes it catch up with the store first (a new account, a new token), and
     * a token it does know is confirmed against the account's stream (a rotation or a disable is
     * effective on the very next request, not a poll later).
     */
    async authenticate(tokenHash: string): Promise<Account> {
      let found = view.accountByTokenHash(tokenHash);
      if (!found) {
        await view.catchUp(store, 'account');
        found = view.accountByTokenHash(tokenHash);
      }
      if (!found) throw unauthenticated();
      const fresh = await current(found.id);
      if (!fresh || fresh.disabled || fresh.tokenHash !== tokenHash) throw unauthenticated();
      return fresh;
    },

    getAccount: account,

    async editAccount(id: number, timezone: string): Promise<Account> {
      account(id);
      return command({ type: 'EditAccount', id, timezone: timezone.trim() });
    },

    async createAccount(name: string, timezone: string, token: string | null, jobLimit: number): Promise<{ account: Account; token: string }> {
      if (token !== null && !isWellFormedToken(token)) throw new AppError('INVALID_PARAMETER', 'token: must be exactly 32 characters from A-Z, a-z, 0-9');
      if (!Number.isInteger(jobLimit) || jobLimit < 0) throw new AppError('INVALID_PARAMETER', `job limit: must be a whole number, 0 for none; got ${jobLimit}`);
      const secret = token ?? newToken();
      await view.catchUp(store, 'account');
      if (view.accountByTokenHash(hashToken(secret))) throw new AppError('INVALID_PARAMETER', 'token: already in use');
      const input = { name: name.trim(), timezone: timezone || 'UTC', tokenHash: hashToken(secret), jobLimit, signingSecret: newSigningSecret() };
      // Checked before an id is taken: a refused account must leave no trace in the store.
      accountDecider.decide({ type: 'CreateAccount', id: 0, ...input }, null, commands.now());
      const id = await commands.ids.allocateOne('account');
      const created = await command({ type: 'CreateAccount', id, ...input, name: input.name || `account ${id}` });
      return { account: created, token: secret };
    },

    listAccounts: () => view.allAccounts(),

    /** `replacing`: the hash of the token the caller presented, which must be the account's current one. */
    async rotateToken(id: number, replacing?: string): Promise<{ account: Account; token: string }> {
      const secret = newToken();
      const rotated = await command({ type: 'RotateToken', id, tokenHash: hashToken(secret), replacing });
      return { account: rotated, token: secret };
    },

    /** Its token is refused and its jobs stop (the planner plans nothing for a disabled account). */
    disableAccount: (id: number) => command({ type: 'DisableAccount', id }),
    /** Its token works again and its jobs run from their next occurrence; the disabled time is not caught up. */
    enableAccount: (id: number) => command({ type: 'EnableAccount', id }),

    /**
     * A new signing secret, returned here only; the previous one keeps signing for the grace
     * period. An account created before signed requests existed gets its first one here.
     */
    async rotateSigningSecret(id: number): Promise<{ account: Account; signingSecret: string; previousValidUntil: number }> {
      account(id);
      const signingSecret = newSigningSecret();
      const rotated = await command({ type: 'RotateSigningSecret', id, signingSecret });
      return { account: rotated, signingSecret, previousValidUntil: rotated.signing.previous?.validUntil ?? 0 };
    },
  };
}
