import { signWebhook, standardWebhookHeaders } from '../signing.ts';
import type { ChannelAddress, ChannelType } from './channel.ts';
import { hostGroups, hostLine } from './hostGroups.ts';
import { LINK_ROWS, linkLabel, type ActionLinks } from './actionLinks.ts';
import type { Trigger, TriggerKind } from './trigger.ts';

/**
 * What each kind of channel receives. A notification never carries the job's password, the
 * credentials of its URL (masked as `***:***@`) or its header values: triggers only hold the
 * fields below, and the URL is masked before it enters a trigger.
 */

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

export interface HttpMessage {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface MessageContext {
  /** TOCK_PUBLIC_URL: with it, each job links to its logs. */
  publicUrl?: string;
  /** Signing time of a webhook, ms. */
  now: number;
  /** A webhook's `webhook-id`: the same for every attempt of one message to one channel, so a receiver can drop a repeat. */
  deliveryId: string;
  /** Where Telegram's Bot API is (tests point it at a local receiver). */
  telegramApi?: string;
  /**
   * A job's action links, when TOCK_PUBLIC_URL is set and the notifier can sign them; undefined
   * past the first LINKED_JOBS jobs of a message, so a merged message stays bounded.
   */
  actions?: (t: Trigger) => ActionLinks | undefined;
}


/** `https://user:pass@host/` -> `https://***:***@host/`; anything unparsable is shown as is minus `x:y@`. */
export function maskCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '***';
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//***@');
  }
}

const VERB: Record<TriggerKind, string> = {
  failed: 'failed',
  disabled: 'was disabled after repeated failures',
  okay: 'is okay again',
  match: 'matched its notify text',
  slow: 'was slow',
  rate: 'is failing often',
  skipped: 'skipped runs',
  missed: 'missed runs during downtime',
};

const jobTitle = (t: Trigger) => (t.job.name ? `"${t.job.name}" (#${t.job.id})` : `cron job #${t.job.id}`);
const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
const logsLink = (t: Trigger, ctx: MessageContext) => (ctx.publicUrl ? `${ctx.publicUrl.replace(/\/+$/, '')}/api/v1/cron_logs?id=${t.job.id}` : '');
const isFailure = (t: Trigger) => t.execution.failed;
/** Where a job's logs are: its logs link when the message has action links, else the API's. */
const logsOf = (t: Trigger, ctx: MessageContext) => ctx.actions?.(t)?.logs ?? logsLink(t, ctx);

/** One line a person reads at a glance. */
export function headline(t: Trigger): string {
  return `Cron job ${jobTitle(t)} ${VERB[t.kind]}`;
}

/** The facts of one trigger, in display order. */
export function facts(t: Trigger, ctx: MessageContext): [string, string][] {
  const rows: [string, string][] = [
    ['What', t.reasons.join('; ')],
    ['When', iso(t.execution.time)],
    ['URL', t.job.url],
    ['HTTP status', t.execution.httpStatus ? String(t.execution.httpStatus) : 'no response'],
  ];
  if (t.execution.error) rows.push(['Error', t.execution.error]);
  rows.push(['Execution time', `${t.execution.executionTime.toFixed(2)} s`]);
  if (t.job.groupName) rows.push(['Group', t.job.groupName]);
  const links = ctx.actions?.(t);
  if (links) for (const [k, action] of LINK_ROWS) rows.push([k, links[action]]);
  else if (logsLink(t, ctx)) rows.push(['Logs', logsLink(t, ctx)]);
  return rows;
}

/**
 * The subject (and chat title): which job and what happened; when merged, the host most of its
 * failing jobs call, or a count.
 */
export function subject(triggers: Trigger[]): string {
  if (triggers.length === 1) return `Tock: ${headline(triggers[0]!).replace(/^Cron job /, '')}`;
  const [top] = hostGroups(triggers);
  if (top) {
    const others = new Set(triggers.map((t) => t.job.id).filter((id) => !top.jobs.includes(id))).size;
    return `Tock: ${top.host}: ${top.jobs.length} jobs failing${others ? `, ${others} more cron job${others === 1 ? ' needs' : 's need'} attention` : ''}`;
  }
  const counts = new Map<TriggerKind, number>();
  for (const t of triggers) counts.set(t.kind, (counts.get(t.kind) ?? 0) + 1);
  const parts = [...counts].map(([kind, n]) => `${n} ${VERB[kind]}`);
  return `Tock: ${triggers.length} cron jobs need attention (${parts.join(', ')})`;
}

/**
 * The message's host lines ("api.example.com: 37 jobs failing since 10:02 UTC, ..."), none when no
 * host has two failing jobs; a chat shows the largest SHOWN_IN_CHAT, each cut to 200 characters.
 */
function hostLines(triggers: Trigger[], ctx: MessageContext, chat = false): string[] {
  const lines = hostGroups(triggers).map((g) => hostLine(g, ctx.now));
  if (!chat) return lines;
  const shown = lines.slice(0, SHOWN_IN_CHAT).map((l) => clip(l, 200));
  return lines.length > SHOWN_IN_CHAT ? [...shown, `…and ${lines.length - SHOWN_IN_CHAT} more hosts`] : shown;
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function emailMessage(triggers: Trigger[], ctx: MessageContext): EmailMessage {
  const text = triggers
    .map((t) => [headline(t), ...facts(t, ctx).map(([k, v]) => `  ${k}: ${v}`), t.execution.output ? `  Output: ${t.execution.output.slice(0, 500)}` : ''].filter(Boolean).join('\n'))
    .join('\n\n');
  const html = triggers
    .map((t) => {
      const rows = facts(t, ctx)
        .map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${linkLabel(k) ? `<a href="${escapeHtml(v)}">${escapeHtml(v)}</a>` : escapeHtml(v)}</td></tr>`)
        .join('');
      const output = t.execution.output ? `<pre>${escapeHtml(t.execution.output.slice(0, 500))}</pre>` : '';
      return `<h3>${escapeHtml(headline(t))}</h3><table>${rows}</table>${output}`;
    })
    .join('<hr>');
  const hosts = hostLines(triggers, ctx);
  const hostText = hosts.length ? `By host:\n${hosts.map((l) => `  ${l}`).join('\n')}\n\n` : '';
  const hostHtml = hosts.length ? `<h3>By host</h3><ul>${hosts.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul><hr>` : '';
  return { subject: subject(triggers), text: `${hostText}${text}\n\n-- Tock\n`, html: `<!doctype html><html><body>${hostHtml}${html}<p>-- Tock</p></body></html>` };
}

/** FastCron's webhook fields for one trigger (status 1 failed, 0 okay). */
export function webhookFields(t: Trigger, ctx?: MessageContext) {
  const actions = ctx?.actions?.(t);
  return {
    id: t.job.id,
    time: t.execution.time,
    output: t.execution.output,
    downloaded: t.execution.downloaded,
    httpStatus: t.execution.httpStatus,
    error: t.execution.error,
    executionTime: t.execution.executionTime,
    status: isFailure(t) ? 1 : 0,
    message: isFailure(t) ? 'fails' : 'okay',
    name: t.job.name,
    url: t.job.url,
    group: t.job.group ?? 0,
    // Tock's additions: what happened, and why.
    event: t.kind,
    reasons: t.reasons,
    fail: t.fail,
    ...(actions ? { actions } : {}),
  };
}

/**
 * The first trigger's fields at the top level (FastCron receivers read those), every trigger in
 * `notifications`; signed twice, the same secrets in each: X-Tock-Signature and Standard Webhooks.
 */
export function webhookMessage(triggers: Trigger[], address: ChannelAddress, secrets: readonly string[], ctx: MessageContext): HttpMessage {
  const [first] = triggers;
  if (!first) throw new Error('webhookMessage: no notification to send');
  const hosts = hostGroups(triggers).map((g) => ({ host: g.host, count: g.jobs.length, jobs: g.jobs, since: g.since, error: g.error }));
  const body = JSON.stringify({ ...webhookFields(first, ctx), count: triggers.length, hosts, notifications: triggers.map((t) => webhookFields(t, ctx)) });
  const headers = { 'content-type': 'application/json', 'x-tock-signature': signWebhook(secrets, body, ctx.now), ...standardWebhookHeaders(secrets, ctx.deliveryId, body, ctx.now) };
  return { url: address.url!, headers, body };
}

const SHOWN_IN_CHAT = 10;
const more = (triggers: Trigger[]) => (triggers.length > SHOWN_IN_CHAT ? `…and ${triggers.length - SHOWN_IN_CHAT} more` : '');
const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const json = (url: string, payload: unknown): HttpMessage => ({ url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });

/** Slack incoming webhook: `text` (the notification fallback) and Block Kit `blocks`. */
export function slackMessage(triggers: Trigger[], address: ChannelAddress, ctx: MessageContext): HttpMessage {
  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const blocks: unknown[] = [{ type: 'header', text: { type: 'plain_text', text: clip(subject(triggers), 150) } }];
  const hosts = hostLines(triggers, ctx, true);
  if (hosts.length) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(`*By host*\n${hosts.map((l) => `• ${escape(l)}`).join('\n')}`, 3000) } });
  for (const t of triggers.slice(0, SHOWN_IN_CHAT)) {
    const lines = facts(t, ctx).map(([k, v]) => (k === 'Logs' ? `*${k}:* <${v}|view logs>` : linkLabel(k) ? `<${v}|${k}>` : `*${k}:* ${escape(v)}`));
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(`*${escape(headline(t))}*\n${lines.join('\n')}`, 3000) } });
  }
  if (more(triggers)) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: more(triggers) }] });
  return json(address.url!, { text: subject(triggers), blocks });
}

/** Discord webhook: `content` plus up to 10 `embeds` (title, description, fields, timestamp, colour), within Discord's 6000 characters of embed text. */
export function discordMessage(triggers: Trigger[], address: ChannelAddress, ctx: MessageContext): HttpMessage {
  const all = triggers.slice(0, SHOWN_IN_CHAT).map((t) => ({
    title: clip(headline(t), 256),
    description: clip(t.reasons.join('; '), 1024),
    color: isFailure(t) ? 0xd32f2f : 0x2e7d32,
    timestamp: new Date(t.execution.time * 1000).toISOString(),
    ...(logsOf(t, ctx) ? { url: logsOf(t, ctx) } : {}),
    fields: facts(t, ctx)
      .filter(([k]) => k !== 'What')
      .map(([name, value]) => ({ name, value: linkLabel(name) ? `[${linkLabel(name)}](${value})` : clip(value, 300), inline: name === 'HTTP status' || name === 'Execution time' })),
  }));
  const size = (e: (typeof all)[number]) => e.title.length + e.description.length + e.fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
  const embeds: typeof all = [];
  let used = 0;
  for (const e of all) {
    if (used + size(e) > 5800) break;
    embeds.push(e);
    used += size(e);
  }
  const left = triggers.length - embeds.length;
  const content = [subject(triggers), ...hostLines(triggers, ctx, true), left > 0 ? `…and ${left} more` : ''].filter(Boolean).join('\n');
  return json(address.url!, { content: clip(content, 2000), embeds, allowed_mentions: { parse: [] } });
}

/** Teams (Workflows "post to a channel when a webhook request is received"): a message with an Adaptive Card. */
export function teamsMessage(triggers: Trigger[], address: ChannelAddress, ctx: MessageContext): HttpMessage {
  const body: unknown[] = [{ type: 'TextBlock', text: subject(triggers), weight: 'Bolder', size: 'Medium', wrap: true }];
  for (const line of hostLines(triggers, ctx, true)) body.push({ type: 'TextBlock', text: line, wrap: true });
  for (const t of triggers.slice(0, SHOWN_IN_CHAT)) {
    body.push({ type: 'TextBlock', text: headline(t), weight: 'Bolder', wrap: true, separator: true });
    body.push({ type: 'FactSet', facts: facts(t, ctx).map(([title, value]) => ({ title, value })) });
  }
  if (more(triggers)) body.push({ type: 'TextBlock', text: more(triggers), isSubtle: true, wrap: true });
  const only = triggers.length === 1 ? triggers[0]! : undefined;
  const links = only && ctx.actions?.(only);
  const link = only ? logsLink(only, ctx) : '';
  const buttons = links
    ? LINK_ROWS.map(([k, action]) => ({ type: 'Action.OpenUrl', title: linkLabel(k)!, url: links[action] }))
    : link
      ? [{ type: 'Action.OpenUrl', title: 'View logs', url: link }]
      : [];
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body,
    ...(buttons.length ? { actions: buttons } : {}),
  };
  return json(address.url!, { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }] });
}

/** Telegram Bot API `sendMessage`: `chat_id`, `text` (HTML, at most 4096 characters, never cut inside a tag), `parse_mode`. */
export function telegramMessage(triggers: Trigger[], address: ChannelAddress, ctx: MessageContext): HttpMessage {
  const blocks = triggers.slice(0, SHOWN_IN_CHAT).map((t) => {
    const lines = ['', `<b>${escapeHtml(headline(t))}</b>`];
    for (const [k, v] of facts(t, ctx)) lines.push(linkLabel(k) ? `<a href="${escapeHtml(v)}">${escapeHtml(linkLabel(k)!)}</a>` : `${escapeHtml(k)}: ${escapeHtml(clip(v, 300))}`);
    return lines.join('\n');
  });
  let text = [`<b>${escapeHtml(subject(triggers))}</b>`, ...hostLines(triggers, ctx, true).map(escapeHtml)].join('\n');
  let shown = 0;
  for (const block of blocks) {
    if (text.length + block.length > 3900) break;
    text += `\n${block}`;
    shown++;
  }
  if (shown < triggers.length) text += `\n\n…and ${triggers.length - shown} more`;
  const api = (ctx.telegramApi ?? 'https://api.telegram.org').replace(/\/+$/, '');
  return json(`${api}/bot${address.botToken}/sendMessage`, {
    chat_id: address.chatId,
    text,
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
  });
}

/** The HTTP request a non-email channel receives; `secrets` sign a webhook (newest first). */
export function httpMessage(type: Exclude<ChannelType, 'email'>, triggers: Trigger[], address: ChannelAddress, secrets: readonly string[], ctx: MessageContext): HttpMessage {
  switch (type) {
    case 'webhook':
      return webhookMessage(triggers, address, secrets, ctx);
    case 'slack':
      return slackMessage(triggers, address, ctx);
    case 'discord':
      return discordMessage(triggers, address, ctx);
    case 'teams':
      return teamsMessage(triggers, address, ctx);
    case 'telegram':
      return telegramMessage(triggers, address, ctx);
  }
}
