import type { ApiError } from './api.ts';
import { h, replace } from './dom.ts';
import { formatTime } from './format.ts';
import type { ViewContext } from './view.ts';

interface Channel {
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
}

const HEADINGS = ['ID', 'Type', 'Name', 'Address', 'Enabled', 'Failures', 'Last error', 'Created', 'Test'];
/** A cell labelled with its column (the label shows on a phone, where rows are cards). */
const cell = (i: number, className: string, ...children: (Node | string)[]) => h('td', { className, attrs: { 'data-label': HEADINGS[i] } }, ...children);

/** The account's notification channels (addresses as the API masks them), with a test button each. */
export function channelsView({ call, main }: ViewContext) {
  const message = h('p', { className: 'error', attrs: { role: 'alert' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status' } });
  const body = h('tbody');
  replace(
    main,
    h('h1', {}, 'Notification channels'),
    h('p', { className: 'hint' }, 'A job notifies the channels in its notifyChannels setting (their ids), or every channel when it is empty. Channels are added with channel_add or the CLI.'),
    message,
    notice,
    h('table', { className: 'cards', attrs: { id: 'channels' } }, h('thead', {}, h('tr', {}, ...HEADINGS.map((t) => h('th', { attrs: { scope: 'col' } }, t)))), body),
  );
  const test = async (c: Channel) => {
    replace(notice);
    replace(message);
    try {
      const r = await call<{ delivered: boolean; error: string }>('channel_test', { id: c.id });
      if (r.delivered) replace(notice, `Test message delivered to channel ${c.id}.`);
      else replace(message, `Channel ${c.id}: ${r.error}`);
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  };
  call<Channel[]>('channel_list').then(
    (channels) => {
      replace(
        body,
        ...channels.map((c) =>
          h(
            'tr',
            {},
            cell(0, '', String(c.id)),
            cell(1, '', c.type),
            cell(2, '', c.name),
            cell(3, 'url', c.email ?? c.url ?? (c.chatId ? `chat ${c.chatId}` : '')),
            cell(4, '', c.enabled ? 'yes' : 'no'),
            cell(5, '', String(c.failures)),
            cell(6, 'output', c.lastError || '-'),
            cell(7, '', formatTime(c.createdAt)),
            cell(8, '', h('button', { className: 'secondary', attrs: { type: 'button' }, on: { click: () => void test(c) } }, 'Send test')),
          ),
        ),
      );
      if (!channels.length) body.append(h('tr', {}, h('td', { attrs: { colspan: 9 }, className: 'hint' }, 'No channel yet.')));
    },
    (error: ApiError) => replace(message, error.message),
  );
  return () => {};
}
