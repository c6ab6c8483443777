import { isSealed } from '../crypto/envelope.ts';
import { AppError } from '../errors.ts';
import type { Decider } from '../decider.ts';

/**
 * A channel: where an account's notifications go. Its address is a secret for every kind but
 * email (a chat webhook URL or a bot token lets anyone post there): it is shown only masked.
 * A webhook channel also has a signing secret, shown once, in the answer that created it or
 * rotated it; after a rotation the secret it replaced still signs until the overlap ends.
 */

export const CHANNEL_TYPES = ['email', 'webhook', 'slack', 'discord', 'teams', 'telegram'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export interface ChannelAddress {
  email?: string;
  url?: string;
  botToken?: string;
  chatId?: string;
}

export interface Channel {
  id: number;
  accountId: number;
  type: ChannelType;
  name: string;
  address: ChannelAddress;
  /** HMAC key of a webhook channel; '' for the others. */
  secret: string;
  /** An escalation channel: told of a job's failure only once it has lasted this many minutes (0: told of everything). */
  escalateAfter: number;
  /** The secret a rotation replaced, still signing until `validUntil` (ms). */
  previousSecret: { secret: string; validUntil: number } | null;
  enabled: boolean;
  /** Failed delivery attempts in a row. */
  failures: number;
  lastError: string;
  deleted: boolean;
  createdAt: number;
}

/** After this many failed attempts in a row a channel is disabled until its owner edits it. */
export const CHANNEL_FAILURE_LIMIT = 5;

/** How long a rotated-out signing secret still signs, unless the rotation says otherwise: receivers switch over meanwhile. */
export const DEFAULT_SECRET_OVERLAP_S = 24 * 3600;
/** The longest overlap a rotation may ask for. */
export const MAX_SECRET_OVERLAP_S = 7 * 24 * 3600;
/** The longest a failure may last before an escalation channel hears of it, minutes (a week). */
export const MAX_ESCALATE_AFTER = 7 * 24 * 60;

export type ChannelEvent =
  | { type: 'ChannelAdded'; data: { id: number; accountId: number; type: ChannelType; name: string; address: ChannelAddress; secret: string; escalateAfter?: number; at: number } }
  | { type: 'ChannelEdited'; data: { name?: string; address?: ChannelAddress; enabled?: boolean; escalateAfter?: number; at: number } }
  | { type: 'ChannelDeleted'; data: { at: number } }
  | { type: 'ChannelSecretRotated'; data: { secret: string; previousValidUntil: number; at: number } }
  | { type: 'ChannelFailed'; data: { failures: number; error: string; at: number } }
  | { type: 'ChannelDisabled'; data: { failures: number; error: string; at: number } }
  | { type: 'ChannelRecovered'; data: { at: number } };

export type ChannelCommand =
  | { type: 'AddChannel'; id: number; accountId: number; channelType: string; name: string; address: ChannelAddress; secret: string; escalateAfter?: number }
  | { type: 'EditChannel'; id: number; accountId: number; name?: string; address?: ChannelAddress; enabled?: boolean; escalateAfter?: number }
  | { type: 'DeleteChannel'; id: number; accountId: number }
  | { type: 'RotateChannelSecret'; id: number; accountId: number; secret: string; overlapSeconds?: number }
  | { type: 'RecordAttempt'; id: number; ok: boolean; error: string };

const invalid = (message: string) => new AppError('INVALID_PARAMETER', message);
const missing = (message: string) => new AppError('MISSING_PARAMETER', message);

function checkUrl(url: string | undefined): string {
  if (!url?.trim()) throw missing('url: is required for this channel type');
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw invalid('url: is not a valid URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw invalid(`url: scheme must be http or https, got ${parsed.protocol.slice(0, -1)}`);
  if (url.length > 2048) throw invalid(`url: must be at most 2048 characters, got ${url.length}`);
  return parsed.toString();
}

/** Validates the address a channel type needs; returns it normalised. */
export function checkAddress(type: ChannelType, address: ChannelAddress): ChannelAddress {
  switch (type) {
    case 'email': {
      const email = address.email?.trim();
      if (!email) throw missing('email: is required for an email channel');
      if (email.length > 254 || !/^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/.test(email)) throw invalid(`email: "${email.slice(0, 80)}" is not an email address`);
      return { email };
    }
    case 'telegram': {
      const botToken = address.botToken?.trim();
      const chatId = address.chatId?.trim();
      if (!botToken) throw missing('botToken: is required for a telegram channel');
      if (!/^\d+:[A-Za-z0-9_-]{20,}$/.test(botToken)) throw invalid('botToken: must look like "123456:ABC-DEF..." (from @BotFather)');
      if (!chatId) throw missing('chatId: is required for a telegram channel');
      if (!/^(-?\d{1,20}|@[A-Za-z0-9_]{4,64})$/.test(chatId)) throw invalid('chatId: must be a numeric chat id or an @channel name');
      return { botToken, chatId };
    }
    default:
      return { url: checkUrl(address.url) };
  }
}

function checkEscalateAfter(minutes: number | undefined): number | undefined {
  if (minutes === undefined) return undefined;
  if (!Number.isSafeInteger(minutes) || minutes < 0 || minutes > MAX_ESCALATE_AFTER) {
    throw invalid(`escalateAfter: must be a whole number of minutes from 0 to ${MAX_ESCALATE_AFTER}, got ${minutes}`);
  }
  return minutes;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length > 255) throw invalid(`name: must be at most 255 characters, got ${trimmed.length}`);
  return trimmed;
}

// A value still sealed (its key missing) is masked whole: its last characters are ciphertext.
const masked = (secret: string) => (secret.length <= 4 || isSealed(secret) ? '****' : `****${secret.slice(-4)}`);

/** The address as an API answer shows it: an email in full, everything else masked. */
export function maskAddress(channel: Pick<Channel, 'type' | 'address'>): ChannelAddress {
  const { address } = channel;
  if (channel.type === 'email') return { email: address.email };
  if (channel.type === 'telegram') return { botToken: masked(address.botToken ?? ''), chatId: address.chatId };
  if (isSealed(address.url ?? '')) return { url: '****' };
  try {
    const url = new URL(address.url ?? '');
    return { url: `${url.protocol}//${url.host}/****` };
  } catch {
    return { url: '****' };
  }
}

export const channelDecider: Decider<ChannelCommand, Channel | null, ChannelEvent> = {
  initialState: () => null,
  evolve(state, event) {
    if (event.type === 'ChannelAdded') {
      const { id, accountId, type, name, address, secret, at } = event.data;
      return { id, accountId, type, name, address, secret, escalateAfter: event.data.escalateAfter ?? 0, previousSecret: null, enabled: true, failures: 0, lastError: '', deleted: false, createdAt: at };
    }
    if (!state) return state;
    switch (event.type) {
      case 'ChannelEdited': {
        const { name, address, enabled, escalateAfter } = event.data;
        const reenabled = enabled === true || (address !== undefined && enabled !== false);
        return {
          ...state,
          name: name ?? state.name,
          escalateAfter: escalateAfter ?? state.escalateAfter,
          address: address ?? state.address,
          enabled: enabled ?? (reenabled ? true : state.enabled),
          failures: reenabled ? 0 : state.failures,
        };
      }
      case 'ChannelDeleted':
        return { ...state, deleted: true };
      case 'ChannelSecretRotated': {
        // A second rotation within the overlap ends the oldest secret at once: two at most sign.
        const { secret, previousValidUntil, at } = event.data;
        return { ...state, secret, previousSecret: previousValidUntil > at ? { secret: state.secret, validUntil: previousValidUntil } : null };
      }
      case 'ChannelFailed':
        return { ...state, failures: event.data.failures, lastError: event.data.error };
      case 'ChannelDisabled':
        return { ...state, failures: event.data.failures, lastError: event.data.error, enabled: false };
      case 'ChannelRecovered':
        return { ...state, failures: 0 };
      default:
        return state;
    }
  },
  decide(command, state, now) {
    if (command.type === 'AddChannel') {
      if (state) throw new AppError('INTERNAL', `channel id ${command.id} is already taken`);
      const type = command.channelType.trim().toLowerCase() as ChannelType;
      if (!command.channelType.trim()) throw missing(`type: is required (${CHANNEL_TYPES.join(', ')})`);
      if (!CHANNEL_TYPES.includes(type)) throw invalid(`type: must be one of ${CHANNEL_TYPES.join(', ')}, got "${command.channelType.slice(0, 40)}"`);
      const address = checkAddress(type, command.address);
      const name = checkName(command.name) || `${type} ${command.id}`;
      const escalateAfter = checkEscalateAfter(command.escalateAfter);
      const secret = type === 'webhook' ? command.secret : '';
      return [{ type: 'ChannelAdded', data: { id: command.id, accountId: command.accountId, type, name, address, secret, ...(escalateAfter ? { escalateAfter } : {}), at: now } }];
    }
    if (command.type === 'RecordAttempt') {
      if (!state || state.deleted) return [];
      if (command.ok) return state.failures > 0 ? [{ type: 'ChannelRecovered', data: { at: now } }] : [];
      const failures = state.failures + 1;
      const error = command.error.slice(0, 500);
      if (failures >= CHANNEL_FAILURE_LIMIT && state.enabled) return [{ type: 'ChannelDisabled', data: { failures, error, at: now } }];
      return [{ type: 'ChannelFailed', data: { failures, error, at: now } }];
    }
    if (!state || state.deleted || state.accountId !== command.accountId) throw new AppError('NOT_FOUND', `channel ${command.id} not found`);
    if (command.type === 'DeleteChannel') return [{ type: 'ChannelDeleted', data: { at: now } }];
    if (command.type === 'RotateChannelSecret') {
      if (state.type !== 'webhook') throw invalid(`id: channel ${state.id} is ${state.type === 'email' ? 'an' : 'a'} ${state.type} channel; only a webhook channel has a signing secret`);
      const overlap = command.overlapSeconds ?? DEFAULT_SECRET_OVERLAP_S;
      if (!Number.isSafeInteger(overlap) || overlap < 0 || overlap > MAX_SECRET_OVERLAP_S) {
        throw invalid(`overlap: must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_S}, got ${overlap}`);
      }
      return [{ type: 'ChannelSecretRotated', data: { secret: command.secret, previousValidUntil: now + overlap * 1000, at: now } }];
    }
    const name = command.name === undefined ? undefined : checkName(command.name) || state.name;
    const address = command.address === undefined ? undefined : checkAddress(state.type, { ...state.address, ...command.address });
    const escalateAfter = checkEscalateAfter(command.escalateAfter);
    const changed =
      (name !== undefined && name !== state.name) ||
      (address !== undefined && JSON.stringify(address) !== JSON.stringify(state.address)) ||
      (escalateAfter !== undefined && escalateAfter !== state.escalateAfter) ||
      (command.enabled !== undefined && (command.enabled !== state.enabled || (command.enabled && state.failures > 0)));
    if (!changed) return [];
    return [{ type: 'ChannelEdited', data: { name, address, enabled: command.enabled, ...(escalateAfter !== undefined ? { escalateAfter } : {}), at: now } }];
  },
};

/** The secrets a webhook sent at `now` is signed with, newest first: the current one, and the one it replaced while the overlap lasts. */
export function webhookSecrets(channel: Pick<Channel, 'secret' | 'previousSecret'>, now: number): string[] {
  const secrets = channel.secret ? [channel.secret] : [];
  if (channel.previousSecret && now < channel.previousSecret.validUntil) secrets.push(channel.previousSecret.secret);
  return secrets;
}

export const channelStream = (id: number) => `channel-${id}`;
