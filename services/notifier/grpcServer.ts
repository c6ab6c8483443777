import type { MessageInitShape } from '@bufbuild/protobuf';
import { type NotifierService, type ChannelSchema } from '../../shared/gen/tock/v1/notifier_pb.ts';
import type { ServiceImpl } from '../../shared/grpc/bridge.ts';
import { maskAddress, type Channel, type ChannelAddress } from '../../shared/notify/index.ts';
import type { ActionLinksService, LinkAnswer } from './actionLinks.ts';
import type { ChannelUseCases } from './channelUseCases.ts';
import type { SnoozeAnswer, SnoozeUseCases } from './snoozeUseCases.ts';

type Impl = ServiceImpl<(typeof NotifierService)['method']>;

/** A channel as answers show it: the address masked; the secret only when `withSecret` (creation, rotation). */
export function toProtoChannel(c: Channel, withSecret = false): MessageInitShape<typeof ChannelSchema> {
  const shown = maskAddress(c);
  return {
    id: BigInt(c.id),
    type: c.type,
    name: c.name,
    email: shown.email ?? '',
    url: shown.url ?? '',
    botToken: shown.botToken ?? '',
    chatId: shown.chatId ?? '',
    enabled: c.enabled,
    failures: c.failures,
    lastError: c.lastError,
    createdAt: BigInt(Math.floor(c.createdAt / 1000)),
    secret: withSecret ? c.secret : '',
    escalateAfter: c.escalateAfter,
  };
}

const addressOf = (r: { email?: string; url?: string; botToken?: string; chatId?: string }): ChannelAddress =>
  Object.fromEntries(Object.entries({ email: r.email, url: r.url, botToken: r.botToken, chatId: r.chatId }).filter(([, v]) => v !== undefined && v !== ''));

const snoozeReply = ({ id, snooze }: SnoozeAnswer) => ({ id: BigInt(id), snoozed: snooze !== null, until: BigInt(snooze?.until ?? 0), untilRecovery: snooze !== null && snooze.until === null });

const linkReply = ({ state, claims }: LinkAnswer) => ({
  state,
  accountId: BigInt(claims?.accountId ?? 0),
  jobId: BigInt(claims?.jobId ?? 0),
  action: claims?.action ?? '',
  expiresAt: BigInt(claims?.expiresAt ?? 0),
});

/** Without TOCK_PUBLIC_URL (or a key to sign with) no link was ever given out: every token is invalid. */
const noLinks = async () => ({ state: 'invalid' });

export function notifierGrpcImpl(channels: ChannelUseCases, snoozes: SnoozeUseCases, links?: ActionLinksService, now: () => number = Date.now): Impl {
  return {
    actionLinkCheck: links ? async (r) => linkReply(await links.check(r.token, now())) : noLinks,
    actionLinkUse: links ? async (r) => linkReply(await links.use(r.token, now())) : noLinks,
    jobSnooze: async (r) => snoozeReply(await snoozes.snooze(Number(r.accountId), Number(r.id), r.duration)),
    jobUnsnooze: async (r) => snoozeReply(await snoozes.unsnooze(Number(r.accountId), Number(r.id))),
    channelList: async (r) => ({ channels: channels.list(Number(r.accountId)).map((c) => toProtoChannel(c)) }),
    channelAdd: async (r) => toProtoChannel(await channels.add(Number(r.accountId), { type: r.type, name: r.name, address: addressOf(r), escalateAfter: r.escalateAfter }), true),
    channelEdit: async (r) => {
      const address = addressOf(r);
      return toProtoChannel(
        await channels.edit(Number(r.accountId), Number(r.id), { name: r.name, enabled: r.enabled, escalateAfter: r.escalateAfter, address: Object.keys(address).length ? address : undefined }),
      );
    },
    channelDelete: async (r) => toProtoChannel(await channels.remove(Number(r.accountId), Number(r.id))),
    channelSecretRotate: async (r) => {
      const channel = await channels.rotateSecret(Number(r.accountId), Number(r.id), r.overlap === undefined ? undefined : Number(r.overlap));
      return { channel: toProtoChannel(channel, true), previousValidUntil: BigInt(channel.previousSecret?.validUntil ?? 0) };
    },
    channelTest: async (r) => {
      const outcome = await channels.test(Number(r.accountId), Number(r.id));
      return { delivered: outcome.ok, error: outcome.error };
    },
  };
}
