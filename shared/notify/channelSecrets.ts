import { isSealed } from '../crypto/envelope.ts';
import type { Sealer } from '../job/index.ts';
import type { Channel, ChannelAddress } from './channel.ts';

/**
 * Which parts of a channel are secrets, and how they are sealed and opened: a chat or webhook URL
 * (for Slack, Discord and Teams the URL itself lets anyone post), a Telegram bot token, and a
 * webhook's signing secrets (the one it was added with, and each one a rotation gave it). An email
 * address and a chat id are not. Pure: the sealing is given.
 */

const mapAddress = (address: ChannelAddress, fn: (v: string) => string): ChannelAddress => {
  const out = { ...address };
  if (typeof out.url === 'string' && out.url !== '') out.url = fn(out.url);
  if (typeof out.botToken === 'string' && out.botToken !== '') out.botToken = fn(out.botToken);
  return out;
};

type ChannelEventData = { address?: ChannelAddress; secret?: unknown };

const mapEvent = <E extends { type: string; data: unknown }>(event: E, fn: (v: string) => string): E => {
  if (event.type !== 'ChannelAdded' && event.type !== 'ChannelEdited' && event.type !== 'ChannelSecretRotated') return event;
  if (typeof event.data !== 'object' || event.data === null) return event;
  const data: ChannelEventData = { ...(event.data as ChannelEventData) };
  if (data.address) data.address = mapAddress(data.address, fn);
  if (typeof data.secret === 'string' && data.secret !== '') data.secret = fn(data.secret);
  return { ...event, data };
};

/** Channel events with their secrets sealed (a value already sealed stays as it is) or opened. */
export const channelSealing = (sealer: Sealer) => ({
  seal: <E extends { type: string; data: unknown }>(event: E): E => mapEvent(event, (v) => (isSealed(v) ? v : sealer.seal(v))),
  open: <E extends { type: string; data: unknown }>(event: E): E => mapEvent(event, (v) => sealer.open(v)),
});

/** A copy of the channel with its secrets in clear, for the one request that needs them. */
export const openChannel = (channel: Channel, sealer: Sealer): Channel => ({
  ...channel,
  address: mapAddress(channel.address, (v) => sealer.open(v)),
  secret: channel.secret ? sealer.open(channel.secret) : channel.secret,
  previousSecret: channel.previousSecret ? { ...channel.previousSecret, secret: sealer.open(channel.previousSecret.secret) } : null,
});
