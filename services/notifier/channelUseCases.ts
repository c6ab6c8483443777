import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { handleCommand } from '../../shared/eventStore/handleCommand.ts';
import { createIdAllocator } from '../../shared/eventStore/ids.ts';
import type { Sealer } from '../../shared/job/index.ts';
import { channelDecider, channelStream, deliveryId, type Channel, type ChannelAddress, type ChannelCommand, type Trigger } from '../../shared/notify/index.ts';
import { openChannel } from '../../shared/notify/channelSecrets.ts';
import { newWebhookSecret } from '../../shared/signing.ts';
import type { NotifierView } from './notifierView.ts';
import type { SendOutcome, Senders } from './senders.ts';

export const MAX_CHANNELS = 50;

/** The message channel_test sends: it says what it is, so nobody takes it for a real failure. */
export function testTrigger(accountId: number, now: number): Trigger {
  return {
    key: `test:${now}`,
    kind: 'okay',
    reasons: ['this is a test message sent by channel_test; nothing failed'],
    at: now,
    fail: 0,
    job: { id: 0, accountId, name: 'Tock test notification', url: '', group: null, groupName: '', failureThreshold: 0, channels: null },
    execution: { runId: `test:${now}`, time: Math.floor(now / 1000), failed: false, httpStatus: 200, error: '', output: '', downloaded: 0, executionTime: 0 },
  };
}

/** channel_list, channel_add, channel_edit, channel_delete, channel_test, channel_secret_rotate: an account's channels. */
export function createChannelUseCases(store: EventStore, view: NotifierView, clock: Clock, senders: Senders, secrets: Sealer) {
  const ids = createIdAllocator(store);
  const now = () => clock.now();

  const owned = (accountId: number, id: number): Channel => {
    const channel = view.channel(id);
    if (!channel || channel.deleted || channel.accountId !== accountId) throw new AppError('NOT_FOUND', `channel ${id} not found`);
    return channel;
  };

  const run = async (command: ChannelCommand): Promise<Channel> => {
    const result = await handleCommand(store, { stream: channelStream(command.id), decider: channelDecider, command, now });
    await view.waitFor(result.position);
    return result.state!;
  };

  return {
    /**
     * The account's channels, opened only for the answer's masked form (a URL's host, a bot
     * token's last characters); one that does not open stays sealed and is masked whole.
     */
    list: (accountId: number) =>
      view.channelsOf(accountId).map((c) => {
        try {
          return openChannel(c, secrets);
        } catch {
          return c;
        }
      }),

    /** The new channel, with its signing secret (webhooks): the only time the secret is shown. */
    async add(accountId: number, input: { type: string; name: string; address: ChannelAddress; escalateAfter?: number }): Promise<Channel> {
      if (view.channelsOf(accountId).length >= MAX_CHANNELS) throw new AppError('LIMIT_EXCEEDED', `an account may have at most ${MAX_CHANNELS} channels`);
      const secret = newWebhookSecret();
      const { type, name, address, escalateAfter } = input;
      const command = { type: 'AddChannel' as const, id: 0, accountId, channelType: type, name, address, secret, escalateAfter };
      // Checked before an id is taken: a refused channel leaves no trace in the store.
      channelDecider.decide(command, null, now());
      const id = await ids.allocateOne('channel');
      return run({ ...command, id });
    },

    async edit(accountId: number, id: number, input: { name?: string; address?: ChannelAddress; enabled?: boolean; escalateAfter?: number }): Promise<Channel> {
      owned(accountId, id);
      return run({ type: 'EditChannel', id, accountId, ...input });
    },

    async remove(accountId: number, id: number): Promise<Channel> {
      owned(accountId, id);
      return run({ type: 'DeleteChannel', id, accountId });
    },

    /**
     * A new signing secret for a webhook channel, in clear for the one answer that shows it; the
     * replaced secret keeps signing for `overlapSeconds` (a day when not given).
     */
    async rotateSecret(accountId: number, id: number, overlapSeconds?: number): Promise<Channel> {
      owned(accountId, id);
      return run({ type: 'RotateChannelSecret', id, accountId, secret: newWebhookSecret(), overlapSeconds });
    },

    /** Sends a test message now, outside the delivery record: its outcome is the answer, not a failure count. */
    async test(accountId: number, id: number): Promise<SendOutcome> {
      const channel = owned(accountId, id);
      return senders.send(channel, [testTrigger(accountId, now())], now(), deliveryId(`test-${randomUUID()}`, id));
    },
  };
}

export type ChannelUseCases = ReturnType<typeof createChannelUseCases>;
