import { createHash, randomInt } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import { isValidTimeZone } from '../../shared/schedule/index.ts';
import { evolveSigning, NO_SIGNING, type SigningState } from '../../shared/signing.ts';
import type { Decider } from '../../shared/decider.ts';

export type AccountEvent =
  | { type: 'AccountCreated'; data: { id: number; name: string; timezone: string; tokenHash: string; jobLimit: number; at: number; signingSecret?: string } }
  | { type: 'AccountEdited'; data: { timezone: string; at: number } }
  | { type: 'TokenRotated'; data: { tokenHash: string; at: number } }
  | { type: 'AccountDisabled'; data: { at: number } }
  /** The only events that carry a signing secret, always in the one field `signingSecret`. */
  | { type: 'SigningSecretRotated'; data: { signingSecret: string; at: number } }
  | { type: 'AccountEnabled'; data: { at: number } };

export interface Account {
  id: number;
  name: string;
  timezone: string;
  tokenHash: string;
  jobLimit: number;
  disabled: boolean;
  createdAt: number;
  /** Never leaves the jobs service except in the answer of a rotation (and to the planner through the store). */
  signing: SigningState;
}

export type AccountCommand =
  | { type: 'CreateAccount'; id: number; name: string; timezone: string; tokenHash: string; jobLimit: number; signingSecret: string }
  | { type: 'EditAccount'; id: number; timezone: string }
  /** `replacing`: the hash of the token the caller presented (the API's rotation); the operator's has none. */
  | { type: 'RotateToken'; id: number; tokenHash: string; replacing?: string }
  | { type: 'DisableAccount'; id: number }
  | { type: 'RotateSigningSecret'; id: number; signingSecret: string }
  | { type: 'EnableAccount'; id: number };

const TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** docs/api.md (Account): 32 characters [A-Za-z0-9], from a CSPRNG. */
export const newToken = () => Array.from({ length: 32 }, () => TOKEN_ALPHABET[randomInt(TOKEN_ALPHABET.length)]).join('');
export const isWellFormedToken = (token: string) => /^[A-Za-z0-9]{32}$/.test(token);
/** Tokens are stored only as this hash. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function checkTimezone(timezone: string) {
  if (!isValidTimeZone(timezone)) throw new AppError('INVALID_PARAMETER', `timezone: "${timezone}" is not an IANA time zone name such as Europe/London`);
}

export const accountDecider: Decider<AccountCommand, Account | null, AccountEvent> = {
  initialState: () => null,
  evolve(state, event) {
    switch (event.type) {
      case 'AccountCreated': {
        const { id, name, timezone, tokenHash, jobLimit, at } = event.data;
        return { id, name, timezone, tokenHash, jobLimit, disabled: false, createdAt: at, signing: evolveSigning(NO_SIGNING, event) };
      }
      case 'AccountEdited':
        return state && { ...state, timezone: event.data.timezone };
      case 'TokenRotated':
        return state && { ...state, tokenHash: event.data.tokenHash };
      case 'AccountDisabled':
        return state && { ...state, disabled: true };
      case 'SigningSecretRotated':
        return state && { ...state, signing: evolveSigning(state.signing, event) };
      case 'AccountEnabled':
        return state && { ...state, disabled: false };
      default:
        return state;
    }
  },
  decide(command, state, now) {
    if (command.type === 'CreateAccount') {
      if (state) throw new AppError('INTERNAL', `account id ${command.id} is already taken`);
      checkTimezone(command.timezone);
      const { id, name, timezone, tokenHash, jobLimit, signingSecret } = command;
      return [{ type: 'AccountCreated', data: { id, name, timezone, tokenHash, jobLimit, at: now, signingSecret } }];
    }
    if (!state) throw new AppError('NOT_FOUND', `account ${command.id} not found`);
    switch (command.type) {
      case 'EditAccount':
        checkTimezone(command.timezone);
        return state.timezone === command.timezone ? [] : [{ type: 'AccountEdited', data: { timezone: command.timezone, at: now } }];
      case 'RotateToken':
        // Checked here, against the state the event is appended to: of two rotations with one token, the second is refused.
        if (command.replacing !== undefined && (state.disabled || state.tokenHash !== command.replacing)) throw new AppError('UNAUTHENTICATED', 'Invalid API token, user not found.');
        return [{ type: 'TokenRotated', data: { tokenHash: command.tokenHash, at: now } }];
      case 'DisableAccount':
        return state.disabled ? [] : [{ type: 'AccountDisabled', data: { at: now } }];
      case 'RotateSigningSecret':
        if (state.disabled) throw new AppError('INVALID_STATE', `account ${command.id} is disabled`);
        return [{ type: 'SigningSecretRotated', data: { signingSecret: command.signingSecret, at: now } }];
      case 'EnableAccount':
        return state.disabled ? [{ type: 'AccountEnabled', data: { at: now } }] : [];
    }
  },
};
