import { isIP } from 'node:net';
import { createEgressGuard, isEgressRefused, type EgressRefusedError } from '../../shared/egressGuard.ts';
import type { Sealer } from '../../shared/job/index.ts';
import { emailMessage, httpMessage, LINKED_JOBS, webhookSecrets, type ActionLinks, type Channel, type MessageContext, type Trigger } from '../../shared/notify/index.ts';
import { openChannel } from '../../shared/notify/channelSecrets.ts';
import type { EmailSender, SmtpSettings } from './emailSender.ts';

export type { SmtpSettings } from './emailSender.ts';

export interface SendOutcome {
  ok: boolean;
  /** A sentence for channel_list; never the channel's address or secret. */
  error: string;
  /** The receiver's Retry-After, ms. */
  retryAfterMs: number | null;
  /** For the operator's log only (what an address the egress policy refused resolved to); never shown to the account. */
  detail?: string;
}

export interface Senders {
  /** `deliveryId`: the webhook-id, the same for every attempt of this message to this channel. */
  send(channel: Channel, triggers: Trigger[], now: number, deliveryId: string): Promise<SendOutcome>;
  close(): Promise<void>;
}

export interface SendersOptions {
  smtp?: SmtpSettings;
  allowNetworks: string[];
  publicUrl?: string;
  telegramApi?: string;
  timeoutMs?: number;
  /** Opens the channel's sealed secrets, here only, for the request that needs them. */
  secrets: Sealer;
  /** Signs the jobs' action links (with TOCK_PUBLIC_URL); absent: messages carry none. */
  links?: { linksFor(accountId: number, jobId: number, now: number): ActionLinks };
}

/**
 * A message's action links: one set per job (the same in every place the message shows the job),
 * for its first LINKED_JOBS jobs only, so a merged message of a thousand jobs stays small.
 */
function linksOfMessage(links: SendersOptions['links'], now: number): MessageContext['actions'] {
  if (!links) return undefined;
  const made = new Map<number, ActionLinks>();
  return (t: Trigger) => {
    const known = made.get(t.job.id);
    // Job 0 is channel_test's example: there is nothing to act on.
    if (known || made.size >= LINKED_JOBS || t.job.id <= 0) return known;
    const fresh = links.linksFor(t.job.accountId, t.job.id, now);
    made.set(t.job.id, fresh);
    return fresh;
  };
}

/** `Retry-After`: seconds, or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

// The account sees only that its channel's target is not allowed: neither the host (part of the
// channel's sealed address) nor what it resolved to.
const refusedOutcome = (error: EgressRefusedError): SendOutcome => ({
  ok: false,
  error: "refused by egress policy: the channel's address is not an allowed target",
  retryAfterMs: null,
  detail: error.detail,
});

/** `make` run once, on the first `get`; `made` is what it gave, if it ran (for closing). */
function onFirstUse<T>(make: () => Promise<T>) {
  let made: Promise<T> | undefined;
  return { get: () => (made ??= make()), made: () => made };
}

/**
 * Sends one channel's message: email over the operator's SMTP server (nodemailer), everything
 * else as an HTTP POST behind the same egress guard as job calls (private, loopback and metadata
 * addresses refused unless TOCK_ALLOW_NETWORKS opens them), never following redirects.
 * HTTP's library is loaded on its first message and email's only when SMTP is configured: many
 * notifiers never send email, and a CLI that only lists channels sends nothing.
 */
export function createSenders(options: SendersOptions): Senders {
  const guard = createEgressGuard(options.allowNetworks);
  const timeout = options.timeoutMs ?? 15_000;
  const http = onFirstUse(async () => {
    const { Agent, request } = await import('undici');
    const agent = new Agent({ connect: { lookup: guard.lookup, timeout }, headersTimeout: timeout, bodyTimeout: timeout });
    return { agent, request };
  });
  const smtp = options.smtp;
  // With SMTP configured, email is expected: its library loads now, in the background, so the
  // first message does not wait for it (a failure to load shows on that message).
  const mailer: Promise<EmailSender> | undefined = smtp && import('./emailSender.ts').then((m) => m.createEmailSender(smtp, timeout));
  mailer?.catch(() => undefined);

  const sendEmail = async (channel: Channel, triggers: Trigger[], ctx: MessageContext): Promise<SendOutcome> => {
    if (!mailer) return { ok: false, error: 'email is not configured on this server (SMTP_HOST is not set)', retryAfterMs: null };
    const message = emailMessage(triggers, ctx);
    try {
      await (await mailer).send({ to: channel.address.email ?? '', subject: message.subject, text: message.text, html: message.html });
      return { ok: true, error: '', retryAfterMs: null };
    } catch (error) {
      const e = error as { responseCode?: number; message?: string };
      return { ok: false, error: `SMTP: ${e.responseCode ? `${e.responseCode} ` : ''}${(e.message ?? String(error)).slice(0, 200)}`, retryAfterMs: null };
    }
  };

  const sendHttp = async (channel: Channel, triggers: Trigger[], ctx: MessageContext): Promise<SendOutcome> => {
    if (channel.type === 'email') throw new Error('unreachable');
    const message = httpMessage(channel.type, triggers, channel.address, webhookSecrets(channel, ctx.now), ctx);
    const host = new URL(message.url).hostname.replace(/^\[|\]$/g, '');
    const refused = isIP(host) ? guard.refusal(host) : null;
    if (refused) return refusedOutcome(refused);
    try {
      const { agent, request } = await http.get();
      const response = await request(message.url, { method: 'POST', headers: { 'user-agent': 'Tock-Notifier/1.0', ...message.headers }, body: message.body, dispatcher: agent });
      const text = await response.body.text().catch(() => '');
      if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true, error: '', retryAfterMs: null };
      const detail = text.replace(/\s+/g, ' ').trim().slice(0, 200);
      return { ok: false, error: `HTTP ${response.statusCode}${detail ? `: ${detail}` : ''}`, retryAfterMs: parseRetryAfter(response.headers['retry-after'], ctx.now) };
    } catch (error) {
      if (isEgressRefused(error)) return refusedOutcome(error);
      const e = error as { code?: string; message?: string };
      return { ok: false, error: `${e.code ?? 'error'}: ${(e.message ?? String(error)).slice(0, 200)}`, retryAfterMs: null };
    }
  };

  return {
    async send(sealed, triggers, now, deliveryId) {
      const ctx: MessageContext = { now, deliveryId, publicUrl: options.publicUrl, telegramApi: options.telegramApi, actions: linksOfMessage(options.links, now) };
      let channel: Channel;
      try {
        channel = openChannel(sealed, options.secrets);
      } catch (error) {
        return { ok: false, error: `the channel's address cannot be opened: ${(error as Error).message}; edit the channel or give the notifier that key`, retryAfterMs: null };
      }
      return channel.type === 'email' ? sendEmail(channel, triggers, ctx) : sendHttp(channel, triggers, ctx);
    },
    async close() {
      // A library that failed to load has nothing to close.
      await mailer?.then((m) => m.close(), () => undefined);
      await http.made()?.then(({ agent }) => agent.close(), () => undefined);
    },
  };
}
