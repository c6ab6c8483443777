import type { Call, Params } from './api.ts';
import { h } from './dom.ts';
import { formFields, type ParamDoc } from './forms.ts';

export interface Channel {
  id: number;
  type: string;
  name: string;
  email?: string;
  url?: string;
  botToken?: string;
  chatId?: string;
  enabled: boolean;
  failures: number;
  lastError: string;
  createdAt: number;
  escalateAfter: number;
  /** A webhook's signing secret: only in the answers of channel_add and channel_secret_rotate. */
  secret?: string;
}

/** Where each type of channel delivers (docs/notifications.md, Channels); every other type posts to a URL. */
const ADDRESS: Record<string, string[]> = { email: ['email'], telegram: ['botToken', 'chatId'] };
export const addressOf = (type: string) => ADDRESS[type] ?? ['url'];
/** Addresses the API shows masked: never put back into a field, an empty field keeps them. */
const SECRET = new Set(['url', 'botToken']);
const LABELS: Record<string, string> = { name: 'Name', email: 'Email address', url: 'URL', botToken: 'Bot token', chatId: 'Chat', escalateAfter: 'Escalate after (minutes)', enabled: 'Enabled' };
export const TYPE_NAMES: Record<string, string> = { email: 'Email', webhook: 'Webhook (signed JSON)', slack: 'Slack', discord: 'Discord', teams: 'Microsoft Teams', telegram: 'Telegram' };

export interface ChannelFormOptions {
  call: Call;
  /** channel_add's documented parameters (types, descriptions, limits), from the OpenAPI document. */
  docs: Record<string, ParamDoc>;
  /** Editing this channel; adding one when absent. */
  channel?: Channel;
  saved(channel: Channel): void;
  cancel(): void;
}

/**
 * Adds or edits a channel: its type's address fields (an email, a URL, a bot token and chat),
 * a name and when it escalates. A masked secret (a chat URL, a bot token) is never put back in a
 * field: left empty on an edit, it stays as stored.
 */
export function channelForm(o: ChannelFormOptions) {
  const editing = o.channel;
  const prefix = editing ? `channel-edit-${editing.id}` : 'channel-add';
  const status = h('p', { className: 'error', attrs: { role: 'alert', id: `${prefix}-status` } });
  const f = formFields(prefix, status);
  const types = o.docs.type?.enum ?? Object.keys(TYPE_NAMES);
  const type = h('select', { on: { change: () => drawAddress() } }, ...types.map((t) => h('option', { value: t }, TYPE_NAMES[t] ?? t)));
  type.value = editing?.type ?? 'email';
  const address = h('div', { className: 'address' });
  const doc = (name: string) => o.docs[name]?.description ?? '';
  const inputs = new Map<string, HTMLInputElement>();

  function drawAddress() {
    const rows = addressOf(type.value).map((name) => {
      const secret = SECRET.has(name);
      const shown = editing?.[name as 'url'];
      const input = h('input', {
        attrs: { type: secret ? 'password' : name === 'email' ? 'email' : 'text', autocomplete: secret ? 'new-password' : 'off', spellcheck: 'false', required: !editing },
        value: !secret && shown ? shown : '',
      });
      inputs.set(name, input);
      const hint = secret && shown ? `Now ${shown} (masked). Leave empty to keep it.` : doc(name);
      return f.row(name, LABELS[name] ?? name, input, hint);
    });
    for (const name of [...inputs.keys()]) if (!addressOf(type.value).includes(name)) {
      inputs.delete(name);
      f.controls.delete(name);
    }
    address.replaceChildren(...rows);
  }

  const name = h('input', { attrs: { type: 'text', maxlength: 255, autocomplete: 'off' }, value: editing?.name ?? '' });
  const escalate = h('input', { attrs: { type: 'number', step: 1, min: o.docs.escalateAfter?.minimum ?? 0, max: o.docs.escalateAfter?.maximum }, value: String(editing?.escalateAfter ?? 0) });
  const enabled = h('input', { attrs: { type: 'checkbox' }, checked: editing?.enabled ?? true });
  const submit = h('button', { attrs: { type: 'submit', id: `${prefix}-save` } }, editing ? 'Save channel' : 'Add channel');

  function params(): Params {
    const p: Params = editing ? { id: editing.id } : { type: type.value };
    if (!editing || name.value !== editing.name) p.name = name.value;
    for (const [key, input] of inputs) {
      const value = input.value.trim();
      // An edit sends an address only when it is typed: the stored one (masked, or as shown) stays.
      if (!editing || (value && value !== editing[key as 'email'])) p[key] = value;
    }
    if (!editing || escalate.value !== String(editing.escalateAfter)) p.escalateAfter = escalate.value;
    if (editing && enabled.checked !== editing.enabled) p.enabled = enabled.checked;
    return p;
  }

  const form = h(
    'form',
    {
      className: 'area-form',
      attrs: { id: prefix, 'aria-labelledby': `${prefix}-title`, novalidate: true },
      on: {
        submit: (event) => {
          event.preventDefault();
          f.clear();
          submit.disabled = true;
          o.call<Channel>(editing ? 'channel_edit' : 'channel_add', params()).then(
            (saved) => o.saved(saved),
            (error: unknown) => {
              f.show(error);
              submit.disabled = false;
            },
          );
        },
      },
    },
    h('h2', { attrs: { id: `${prefix}-title` } }, editing ? `Edit channel ${editing.name || `#${editing.id}`}` : 'Add a channel'),
    editing ? h('p', { className: 'hint' }, `Type: ${TYPE_NAMES[editing.type] ?? editing.type} (a channel keeps its type).`) : f.row('type', 'Type', type),
    f.row('name', 'Name', name),
    address,
    f.row('escalateAfter', LABELS.escalateAfter!, escalate, doc('escalateAfter')),
    editing ? f.row('enabled', 'Enabled', enabled, 'Ticking it again re-enables a channel disabled after failed deliveries.') : null,
    h('div', { className: 'toolbar' }, submit, editing ? h('button', { className: 'secondary', attrs: { type: 'button' }, on: { click: () => o.cancel() } }, 'Cancel') : null),
    status,
  );
  drawAddress();
  return form;
}
