import type { ApiError } from './api.ts';
import { h, replace } from './dom.ts';
import { formatTime } from './format.ts';
import { formFields, secretOnce, zoneList } from './forms.ts';
import type { ViewContext } from './view.ts';

interface Account {
  id: number;
  name: string;
  timezone: string;
  plan: string;
  cron: number;
}

export interface AccountContext extends ViewContext {
  /** After a token rotation: this tab's calls use the new token from now on. */
  tokenChanged(token: string): void;
}

/**
 * The account from one call (account_get): its time zone (new jobs' default), a new API token
 * (account_token_rotate, after a confirmation: this tab goes on with the new one) and a new
 * signing secret for job requests (account_secret_rotate), each shown once with a copy button.
 */
export function accountView({ call, main, tokenChanged }: AccountContext) {
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'account-error' } });
  const about = h('dl', { className: 'settings', attrs: { id: 'account-about' } });
  const zoneStatus = h('p', { className: 'error', attrs: { role: 'alert' } });
  const zoneNotice = h('p', { className: 'notice', attrs: { role: 'status', id: 'timezone-notice' } });
  const f = formFields('account', zoneStatus);
  const zone = h('input', { attrs: { type: 'text', list: 'time-zones', autocomplete: 'off', spellcheck: 'false', maxlength: 64 } });
  const zoneSave = h('button', { attrs: { type: 'submit', id: 'account-timezone-save' } }, 'Save time zone');
  const tokenOut = h('div', { attrs: { id: 'token-result', 'aria-live': 'polite' } });
  const secretOut = h('div', { attrs: { id: 'secret-result', 'aria-live': 'polite' } });

  const zoneForm = h(
    'form',
    { className: 'area-form', attrs: { id: 'timezone-form', 'aria-labelledby': 'timezone-title', novalidate: true }, on: { submit: (e) => { e.preventDefault(); void saveZone(); } } },
    h('h2', { attrs: { id: 'timezone-title' } }, 'Time zone'),
    f.row('timezone', 'Time zone', zone, 'Type to search. New jobs without a time zone of their own use it; existing jobs keep theirs.'),
    zoneList(),
    h('div', { className: 'toolbar' }, zoneSave),
    zoneStatus,
    zoneNotice,
  );
  const section = (id: string, title: string, ...children: (Node | string | null)[]) => h('section', { className: 'area-form', attrs: { id, 'aria-labelledby': `${id}-title` } }, h('h2', { attrs: { id: `${id}-title` } }, title), ...children);
  replace(
    main,
    h('h1', {}, 'Account'),
    message,
    about,
    zoneForm,
    section(
      'account-token',
      'API token',
      h('p', { className: 'hint' }, 'A new token replaces the current one at once: every script, CLI or other tab that uses the current token is refused until you give it the new one. This tab switches to the new token by itself.'),
      h('div', { className: 'toolbar' }, h('button', { className: 'danger', attrs: { type: 'button', id: 'rotate-token' }, on: { click: () => void rotateToken() } }, 'New API token')),
      tokenOut,
    ),
    section(
      'account-signing',
      'Signing secret',
      h('p', { className: 'hint' }, 'Tock signs every request to your jobs\' URLs with it (X-Tock-Signature); your endpoints check the signature. After a rotation the previous secret also signs for 24 hours, so they can switch over.'),
      h('div', { className: 'toolbar' }, h('button', { className: 'secondary', attrs: { type: 'button', id: 'rotate-secret' }, on: { click: () => void rotateSecret() } }, 'New signing secret')),
      secretOut,
    ),
  );

  function drawAbout(a: Account) {
    const item = (term: string, value: string) => [h('dt', {}, term), h('dd', {}, value)];
    replace(about, ...item('Name', a.name || '-'), ...item('Account id', String(a.id)), ...item('Job limit', a.cron ? String(a.cron) : 'none'), ...item('Time zone', a.timezone));
  }

  async function saveZone() {
    f.clear();
    replace(zoneNotice);
    zoneSave.disabled = true;
    try {
      const account = await call<Account>('account_edit', { timezone: zone.value.trim() });
      drawAbout(account);
      zone.value = account.timezone;
      replace(zoneNotice, `Time zone set to ${account.timezone}.`);
    } catch (error) {
      f.show(error);
    } finally {
      zoneSave.disabled = false;
    }
  }

  async function rotateToken() {
    if (!window.confirm('Replace the API token now? The current token stops working at once, for every script and client that uses it. The new one is shown only once.')) return;
    replace(message);
    try {
      const { token } = await call<{ token: string }>('account_token_rotate');
      tokenChanged(token);
      replace(tokenOut, secretOnce('new-token', 'New API token', token, 'This tab already uses it; give it to your scripts and the CLI in place of the old one.'));
      tokenOut.querySelector('input')?.focus();
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  async function rotateSecret() {
    if (!window.confirm('Make a new signing secret? The current one keeps signing for 24 hours; after that your endpoints must check with the new one.')) return;
    replace(message);
    try {
      const r = await call<{ secret: string; previousValidUntil: number | null }>('account_secret_rotate');
      const until = r.previousValidUntil ? `The previous secret also signs until ${formatTime(r.previousValidUntil)}.` : '';
      replace(secretOut, secretOnce('new-signing-secret', 'New signing secret', r.secret, until));
      secretOut.querySelector('input')?.focus();
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  call<Account>('account_get').then(
    (a) => {
      drawAbout(a);
      zone.value = a.timezone;
    },
    (error: ApiError) => replace(message, `Could not load the account: ${error.message}`),
  );
  return () => {};
}
