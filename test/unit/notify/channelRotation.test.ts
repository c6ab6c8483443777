import { expect } from 'chai';
import { createKeyring, generateKey, secretBox } from '../../../shared/crypto/envelope.ts';
import {
  DEFAULT_SECRET_OVERLAP_S,
  MAX_SECRET_OVERLAP_S,
  channelDecider,
  webhookSecrets,
  type Channel,
  type ChannelCommand,
  type ChannelEvent,
} from '../../../shared/notify/index.ts';
import { channelSealing, openChannel } from '../../../shared/notify/channelSecrets.ts';

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3600_000;
const added = (type: 'webhook' | 'slack' = 'webhook'): ChannelEvent => ({
  type: 'ChannelAdded',
  data: { id: 4, accountId: 1, type, name: 'n', address: { url: 'https://h.example/p' }, secret: type === 'webhook' ? 'whsec_first' : '', at: T0 },
});
const rotate = (secret: string, overlapSeconds?: number, accountId = 1): ChannelCommand => ({ type: 'RotateChannelSecret', id: 4, accountId, secret, overlapSeconds });

/** Given events, when the command is decided at `now`: the events and the state after them. */
function when(events: ChannelEvent[], command: ChannelCommand, now: number) {
  const state = events.reduce(channelDecider.evolve, channelDecider.initialState());
  const decided = channelDecider.decide(command, state, now);
  return { decided, state: decided.reduce(channelDecider.evolve, state) as Channel };
}

describe('rotating a webhook channel\'s signing secret (shared/notify channel decider)', () => {
  it('the new secret signs at once; the old one alongside it for a day by default, and not after', () => {
    const { decided, state } = when([added()], rotate('whsec_second'), T0 + HOUR);
    expect(decided).to.deep.equal([{ type: 'ChannelSecretRotated', data: { secret: 'whsec_second', previousValidUntil: T0 + HOUR + DEFAULT_SECRET_OVERLAP_S * 1000, at: T0 + HOUR } }]);
    expect(DEFAULT_SECRET_OVERLAP_S).to.equal(24 * 3600);
    expect(webhookSecrets(state, T0 + HOUR)).to.deep.equal(['whsec_second', 'whsec_first']);
    expect(webhookSecrets(state, T0 + 25 * HOUR - 1)).to.deep.equal(['whsec_second', 'whsec_first']);
    expect(webhookSecrets(state, T0 + 25 * HOUR)).to.deep.equal(['whsec_second']);
  });

  it('an overlap of 0 drops the old secret at once (a secret that leaked); another overlap is taken as given', () => {
    expect(webhookSecrets(when([added()], rotate('whsec_second', 0), T0).state, T0)).to.deep.equal(['whsec_second']);
    const { state } = when([added()], rotate('whsec_second', 90), T0);
    expect(webhookSecrets(state, T0 + 89_999)).to.deep.equal(['whsec_second', 'whsec_first']);
    expect(webhookSecrets(state, T0 + 90_000)).to.deep.equal(['whsec_second']);
  });

  it('a second rotation within the overlap ends the oldest secret at once: two at most sign', () => {
    const first = when([added()], rotate('whsec_second'), T0);
    const second = when([added(), ...first.decided], rotate('whsec_third'), T0 + HOUR);
    expect(webhookSecrets(second.state, T0 + HOUR)).to.deep.equal(['whsec_third', 'whsec_second']);
  });

  it('refuses a channel without a signing secret, a bad overlap, and another account\'s or a deleted channel, deciding nothing', () => {
    expect(() => when([added('slack')], rotate('whsec_x'), T0)).to.throw('id: channel 4 is a slack channel; only a webhook channel has a signing secret');
    for (const bad of [-1, 1.5, MAX_SECRET_OVERLAP_S + 1, Number.NaN]) {
      expect(() => when([added()], rotate('whsec_x', bad), T0), String(bad)).to.throw(/^overlap: must be a whole number of seconds from 0 to 604800, got/);
    }
    expect(() => when([added()], rotate('whsec_x', MAX_SECRET_OVERLAP_S), T0)).to.not.throw();
    expect(() => when([added()], rotate('whsec_x', 60, 2), T0)).to.throw('channel 4 not found');
    expect(() => when([added(), { type: 'ChannelDeleted', data: { at: T0 } }], rotate('whsec_x'), T0)).to.throw('channel 4 not found');
  });

  it('the rotated secret is sealed at rest; a channel folded from sealed events opens both secrets for sending', () => {
    const box = secretBox(createKeyring([{ key: generateKey() }]));
    const sealing = channelSealing(box);
    const { decided } = when([added()], rotate('whsec_second'), T0);
    const sealed = [added(), ...decided].map((e) => sealing.seal(e));
    expect((sealed[1]!.data as { secret: string }).secret).to.match(/^enc:v1:/);
    const channel = sealed.reduce(channelDecider.evolve, channelDecider.initialState())!;
    expect(channel.previousSecret!.secret).to.match(/^enc:v1:/);
    expect(webhookSecrets(openChannel(channel, box), T0)).to.deep.equal(['whsec_second', 'whsec_first']);
  });
});
