import type { ApiError, Call } from './api.ts';
import { h, replace } from './dom.ts';

interface Badge {
  token: string;
  path: string;
  url: string | null;
  markdown: string | null;
}

/**
 * A job's status badge, in a <details> closed at first. Nothing is asked of the API until the
 * owner presses "Show badge" (cron_badge makes the badge when the job has none, so merely opening
 * the page never makes one). Then: the badge as it looks, its URL and Markdown to copy, and
 * "Revoke" (after a confirmation), which ends the URL at once.
 */
export function badgeSection(call: Call, id: number) {
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'badge-error' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status', id: 'badge-notice' } });
  const body = h('div', { attrs: { id: 'badge-body' } });
  const hint = h(
    'p',
    { className: 'hint' },
    "An image of the job's state (ok, failing, late, paused, disabled) at a secret URL, for a README or a status page: anyone with the URL sees the job's name and state, nothing more. Revoke it to end the URL.",
  );
  const show = h('button', { attrs: { type: 'button', id: 'badge-show' }, on: { click: () => void load() } }, 'Show badge');
  const details = h('details', { attrs: { id: 'badge' } }, h('summary', {}, 'Badge'), hint, message, notice, body);
  replace(body, show);

  async function load() {
    replace(message);
    try {
      draw(await call<Badge>('cron_badge', { id }));
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  async function revoke() {
    if (!window.confirm(`Revoke the badge of cron job ${id}? Its URL stops working at once, wherever it is shown.`)) return;
    replace(message);
    try {
      await call('cron_badge_revoke', { id });
      replace(notice, 'The badge is revoked. A new one gets a new URL.');
      replace(body, show);
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  function copyField(label: string, fieldId: string, value: string) {
    const input = h('input', { attrs: { type: 'text', id: fieldId, readonly: true, spellcheck: 'false' }, value });
    const copy = h(
      'button',
      {
        className: 'secondary',
        attrs: { type: 'button', id: `${fieldId}-copy`, 'aria-label': `Copy the ${label.toLowerCase()}` },
        on: {
          click: () => {
            input.select();
            navigator.clipboard?.writeText(value).then(
              () => replace(notice, `${label} copied.`),
              () => replace(notice, `Select the ${label.toLowerCase()} and copy it.`),
            );
          },
        },
      },
      'Copy',
    );
    return h('div', { className: 'copy-field' }, h('label', { attrs: { for: fieldId } }, label), h('div', { className: 'copy-row' }, input, copy));
  }

  function draw(badge: Badge) {
    replace(notice);
    const url = badge.url ?? new URL(badge.path, location.origin).href;
    const markdown = badge.markdown ?? `![cron](${url})`;
    replace(
      body,
      h('p', {}, h('img', { attrs: { src: badge.path, alt: "The job's badge", id: 'badge-image', height: 20 } })),
      copyField('URL', 'badge-url', url),
      copyField('Markdown', 'badge-markdown', markdown),
      h('button', { className: 'danger', attrs: { type: 'button', id: 'badge-revoke' }, on: { click: () => void revoke() } }, 'Revoke badge'),
    );
  }

  return details;
}
