import { accountDecider, type AccountEvent } from '../../../services/jobs/account.ts';
import { deciderSpec, NOW } from '../support/given.ts';

const given = deciderSpec(accountDecider);
const created = (over: Partial<Extract<AccountEvent, { type: 'AccountCreated' }>['data']> = {}): AccountEvent => ({
  type: 'AccountCreated',
  data: { id: 1, name: 'ops', timezone: 'Europe/Paris', tokenHash: 'h1', jobLimit: 0, at: 1, ...over },
});

describe('account decider (given/when/then)', () => {
  describe('CreateAccount', () => {
    it('records the account with its zone, token hash and job limit', () =>
      given()
        .when({ type: 'CreateAccount', id: 1, name: 'ops', timezone: 'Europe/Paris', tokenHash: 'h1', jobLimit: 5, signingSecret: 'whsec_a' })
        .then([{ type: 'AccountCreated', data: { id: 1, name: 'ops', timezone: 'Europe/Paris', tokenHash: 'h1', jobLimit: 5, at: NOW, signingSecret: 'whsec_a' } }]));

    it('refuses a zone that is not IANA, naming the parameter', () =>
      given()
        .when({ type: 'CreateAccount', id: 1, name: 'ops', timezone: 'Mars/Olympus', tokenHash: 'h1', jobLimit: 0, signingSecret: 'whsec_a' })
        .then({ error: 'INVALID_PARAMETER', message: /^timezone: "Mars\/Olympus" is not an IANA time zone/ }));

    it('never reuses an id that is taken', () =>
      given(created()).when({ type: 'CreateAccount', id: 1, name: 'x', timezone: 'UTC', tokenHash: 'h', jobLimit: 0, signingSecret: 'whsec_a' }).then({ error: 'INTERNAL', message: 'account id 1 is already taken' }));
  });

  describe('EditAccount', () => {
    it('records a new zone', () => given(created()).when({ type: 'EditAccount', id: 1, timezone: 'Asia/Tokyo' }).then([{ type: 'AccountEdited', data: { timezone: 'Asia/Tokyo', at: NOW } }]));
    it('records nothing when the zone is the same', () => given(created()).when({ type: 'EditAccount', id: 1, timezone: 'Europe/Paris' }).then([]));
    it('refuses a bad zone', () => given(created()).when({ type: 'EditAccount', id: 1, timezone: 'nowhere' }).then({ error: 'INVALID_PARAMETER', message: /^timezone:/ }));
    it('an unknown account is not found', () => given().when({ type: 'EditAccount', id: 9, timezone: 'UTC' }).then({ error: 'NOT_FOUND', message: 'account 9 not found' }));
  });

  describe('RotateToken', () => {
    it('records the new hash, even when the account is disabled', () =>
      given(created(), { type: 'AccountDisabled', data: { at: 2 } })
        .when({ type: 'RotateToken', id: 1, tokenHash: 'h2' })
        .then([{ type: 'TokenRotated', data: { tokenHash: 'h2', at: NOW } }]));
    it('an unknown account is not found', () => given().when({ type: 'RotateToken', id: 2, tokenHash: 'h' }).then({ error: 'NOT_FOUND' }));
    it("the account's own rotation replaces the token it presented", () =>
      given(created()).when({ type: 'RotateToken', id: 1, tokenHash: 'h2', replacing: 'h1' }).then([{ type: 'TokenRotated', data: { tokenHash: 'h2', at: NOW } }]));
    it("the account's own rotation with a token that is no longer (or never was) the account's is refused as unauthenticated", () =>
      given(created(), { type: 'TokenRotated', data: { tokenHash: 'h2', at: 2 } })
        .when({ type: 'RotateToken', id: 1, tokenHash: 'h3', replacing: 'h1' })
        .then({ error: 'UNAUTHENTICATED' }));
    it("the account's own rotation is refused for a disabled account", () =>
      given(created(), { type: 'AccountDisabled', data: { at: 2 } }).when({ type: 'RotateToken', id: 1, tokenHash: 'h2', replacing: 'h1' }).then({ error: 'UNAUTHENTICATED' }));
  });

  describe('RotateSigningSecret', () => {
    it('records the new secret in its one field', () =>
      given(created({ signingSecret: 'whsec_a' }))
        .when({ type: 'RotateSigningSecret', id: 1, signingSecret: 'whsec_b' })
        .then([{ type: 'SigningSecretRotated', data: { signingSecret: 'whsec_b', at: NOW } }]));
    it('gives an account created before signing existed its first secret', () =>
      given(created()).when({ type: 'RotateSigningSecret', id: 1, signingSecret: 'whsec_b' }).then([{ type: 'SigningSecretRotated', data: { signingSecret: 'whsec_b', at: NOW } }]));
    it('refuses a disabled account', () =>
      given(created(), { type: 'AccountDisabled', data: { at: 2 } }).when({ type: 'RotateSigningSecret', id: 1, signingSecret: 'whsec_b' }).then({ error: 'INVALID_STATE' }));
  });

  describe('DisableAccount', () => {
    it('records the account disabled', () => given(created()).when({ type: 'DisableAccount', id: 1 }).then([{ type: 'AccountDisabled', data: { at: NOW } }]));
    it('records nothing the second time', () => given(created(), { type: 'AccountDisabled', data: { at: 2 } }).when({ type: 'DisableAccount', id: 1 }).then([]));
  });
});
