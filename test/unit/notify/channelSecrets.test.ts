import { expect } from 'chai';
import { createKeyring, generateKey, secretBox } from '../../../shared/crypto/envelope.ts';
import { channelDecider, maskAddress, type Channel } from '../../../shared/notify/index.ts';
import { channelSealing, openChannel } from '../../../shared/notify/channelSecrets.ts';

const box = secretBox(createKeyring([{ key: generateKey() }]));
const sealing = channelSealing(box);
const added = (type: string, address: Record<string, string>, secret = '') => ({ type: 'ChannelAdded', data: { id: 1, accountId: 1, type, name: 'n', address, secret, at: 0 } });

describe('channel secrets', () => {
  it('seals a URL, a bot token and a signing secret; leaves an email address and a chat id readable', () => {
    const hook = sealing.seal(added('webhook', { url: 'https://h.example/p' }, 'sign-me'));
    expect(hook.data.address.url).to.match(/^enc:v1:/);
    expect(hook.data.secret).to.match(/^enc:v1:/);
    const tg = sealing.seal({ type: 'ChannelEdited', data: { address: { botToken: '1:abcdefghijklmnopqrstuvwxyz', chatId: '-1' }, at: 0 } });
    expect(tg.data.address.botToken).to.match(/^enc:v1:/);
    expect(tg.data.address.chatId).to.equal('-1');
    expect(sealing.seal(added('email', { email: 'a@b.example' })).data.address).to.deep.equal({ email: 'a@b.example' });
    expect(sealing.seal({ type: 'ChannelFailed', data: { failures: 1, error: 'x', at: 0 } }).data).to.deep.equal({ failures: 1, error: 'x', at: 0 });
  });

  it('opens what it sealed, never seals twice, and reads clear values written before sealing as they are', () => {
    const sealed = sealing.seal(added('slack', { url: 'https://hooks.slack.example/T/B/x' }));
    expect(sealing.seal(sealed)).to.deep.equal(sealed);
    expect(sealing.open(sealed).data.address.url).to.equal('https://hooks.slack.example/T/B/x');
    const clear = added('webhook', { url: 'https://h.example/p' }, 'old');
    expect(sealing.open(clear)).to.deep.equal(clear);
  });

  it('a channel built from sealed events opens for sending; still sealed, it is masked whole', () => {
    const channel = channelDecider.evolve(null, sealing.seal(added('telegram', { botToken: '1:abcdefghijklmnopqrstuvwxyz', chatId: '-1' })) as never) as Channel;
    expect(maskAddress(channel)).to.deep.equal({ botToken: '****', chatId: '-1' });
    const opened = openChannel(channel, box);
    expect(opened.address.botToken).to.equal('1:abcdefghijklmnopqrstuvwxyz');
    expect(maskAddress(opened).botToken).to.equal('****wxyz');
    const other = secretBox(createKeyring([{ key: generateKey() }]));
    expect(() => openChannel(channel, other)).to.throw(/does not authenticate|does not have/);
    expect(maskAddress({ type: 'slack', address: { url: box.seal('https://hooks.slack.example/x') } })).to.deep.equal({ url: '****' });
  });
});
