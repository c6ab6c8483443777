import type { ApiError } from './api.ts';
import { channelForm, TYPE_NAMES, type Channel } from './channelForm.ts';
import { h, replace } from './dom.ts';
import { formatTime } from './format.ts';
import { paramsOf, secretOnce, type ParamDoc } from './forms.ts';
import type { ViewContext } from './view.ts';

const HEADINGS = ['Name', 'Type', 'Address', 'State', 'Created', 'Actions'];
/** A cell labelled with its column (the label shows on a phone, where rows are cards). */
const cell = (i: number, className: string, ...children: (Node | string | null)[]) => h('td', { className, attrs: { 'data-label': HEADINGS[i] } }, ...children);

const addressText = (c: Channel) => c.email ?? c.url ?? (c.botToken ? `bot ${c.botToken}, chat ${c.chatId ?? ''}` : '');
const label = (c: Channel) => c.name || `#${c.id}`;

/**
 * The account's notification channels from one call (channel_list, addresses masked as the API
 * shows them): add, edit, delete, send a test, and a webhook's new signing secret, shown once.
 */
export function channelsView({ call, main }: ViewContext) {
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'channels-error' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status', id: 'channels-notice' } });
  /** A secret the API has just shown (a new webhook's, a rotation's): here until the page changes. */
  const secret = h('div', { attrs: { id: 'channel-secret' } });
  const body = h('tbody');
  const editor = h('section', { attrs: { id: 'channel-editor', 'aria-label': 'Channel form' } });
  let channels: Channel[] = [];
  let docs: Record<string, ParamDoc> = {};
  replace(
    main,
    h('h1', {}, 'Notification channels'),
    h('p', { className: 'hint' }, 'Where failure notifications go. A job notifies the channels ticked in its form, or every channel when none is.'),
    message,
    notice,
    secret,
    h('table', { className: 'cards', attrs: { id: 'channels' } }, h('thead', {}, h('tr', {}, ...HEADINGS.map((t) => h('th', { attrs: { scope: 'col' } }, t)))), body),
    editor,
  );

  function said(text: string) {
    replace(message);
    replace(notice, text);
  }
  function failed(error: unknown) {
    replace(notice);
    replace(message, (error as ApiError).message);
  }

  function draw() {
    replace(body, ...channels.map(row));
    if (!channels.length) body.append(h('tr', {}, h('td', { attrs: { colspan: HEADINGS.length }, className: 'hint' }, 'No channel yet: add one below.')));
  }

  function row(c: Channel) {
    const button = (text: string, action: string, onClick: () => void, className = 'secondary') =>
      h('button', { className, attrs: { type: 'button', 'data-action': action, 'aria-label': `${text}: ${label(c)}` }, on: { click: onClick } }, text);
    const state = c.enabled ? h('span', { className: 'state state-ok' }, 'enabled') : h('span', { className: 'state state-disabled-failures' }, c.failures ? 'disabled after failures' : 'disabled');
    return h(
      'tr',
      { attrs: { 'data-channel-id': c.id } },
      cell(0, '', h('strong', {}, label(c)), c.escalateAfter ? h('span', { className: 'hint' }, ` escalates after ${c.escalateAfter} min`) : null),
      cell(1, '', TYPE_NAMES[c.type] ?? c.type),
      cell(2, 'url', addressText(c)),
      cell(3, '', state, c.lastError ? h('span', { className: 'hint' }, ` ${c.failures} failed: ${c.lastError}`) : null),
      cell(4, 'time', formatTime(c.createdAt)),
      cell(
        5,
        '',
        h('span', { className: 'toolbar' },
          button('Send test', 'test', () => void test(c)),
          button('Edit', 'edit', () => edit(c)),
          c.type === 'webhook' ? button('New secret', 'rotate', () => void rotate(c)) : null,
          button('Delete', 'delete', () => void remove(c), 'danger'),
        ),
      ),
    );
  }

  /** The add form, or an edit of one channel in its place. */
  function showForm(channel?: Channel) {
    replace(
      editor,
      channelForm({
        call,
        docs,
        channel,
        saved(saved) {
          channels = channel ? channels.map((c) => (c.id === saved.id ? saved : c)) : [...channels, saved];
          draw();
          replace(secret);
          if (saved.secret) replace(secret, secretOnce('channel-new-secret', `Signing secret of ${label(saved)}`, saved.secret, 'Your receiver checks X-Tock-Signature with it (docs/notifications.md).'));
          said(channel ? `Channel ${label(saved)} saved.` : `Channel ${label(saved)} added.`);
          showForm();
          // The form just replaced held the focus: it goes to the secret to copy, else back where the change began.
          const next = secret.querySelector('input') ?? (channel ? body.querySelector<HTMLButtonElement>(`tr[data-channel-id="${saved.id}"] [data-action="edit"]`) : editor.querySelector('select'));
          next?.focus();
        },
        cancel() {
          showForm();
          body.querySelector<HTMLButtonElement>(`tr[data-channel-id="${channel?.id}"] [data-action="edit"]`)?.focus();
        },
      }),
    );
  }

  function edit(c: Channel) {
    showForm(c);
    editor.querySelector<HTMLInputElement>('input[name="name"]')?.focus();
  }

  async function test(c: Channel) {
    replace(notice);
    replace(message);
    try {
      const r = await call<{ delivered: boolean; error: string }>('channel_test', { id: c.id });
      if (r.delivered) said(`Test message delivered to ${label(c)}.`);
      else replace(message, `${label(c)}: ${r.error}`);
    } catch (error) {
      failed(error);
    }
  }

  async function remove(c: Channel) {
    if (!window.confirm(`Delete the channel "${label(c)}" (${TYPE_NAMES[c.type] ?? c.type})? It receives no more notifications; this cannot be undone.`)) return;
    try {
      await call('channel_delete', { id: c.id });
      channels = channels.filter((x) => x.id !== c.id);
      draw();
      said(`Channel ${label(c)} deleted.`);
      // Its row (and the focused button) is gone: the focus goes to the page's content.
      main.focus();
    } catch (error) {
      failed(error);
    }
  }

  async function rotate(c: Channel) {
    if (!window.confirm(`Give the webhook "${label(c)}" a new signing secret? The current one still signs for a day, so your receiver can switch over.`)) return;
    try {
      const r = await call<Channel & { previousValidUntil: number | null }>('channel_secret_rotate', { id: c.id });
      const until = r.previousValidUntil ? `The previous secret also signs until ${formatTime(r.previousValidUntil)}.` : '';
      replace(secret, secretOnce('channel-new-secret', `New signing secret of ${label(c)}`, r.secret ?? '', until));
      said(`New signing secret for ${label(c)}.`);
      secret.querySelector('input')?.focus();
    } catch (error) {
      failed(error);
    }
  }

  // The form's types and limits come from the OpenAPI document (no API call); the list is one call.
  Promise.all([call<Channel[]>('channel_list'), paramsOf('channel_add')]).then(
    ([list, params]) => {
      channels = list;
      docs = params;
      draw();
      showForm();
    },
    (error: Error) => replace(message, `Could not load the channels: ${error.message}`),
  );
  return () => {};
}
