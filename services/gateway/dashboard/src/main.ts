import { ApiError, createApi, tokenStore, type Params } from './api.ts';
import { h, link, replace } from './dom.ts';
import { accountView } from './accountView.ts';
import { calendarView } from './calendarView.ts';
import { channelsView } from './channelsView.ts';
import { groupsView } from './groupsView.ts';
import { jobDetailView } from './jobDetailView.ts';
import { jobFormView } from './jobFormView.ts';
import { jobListView } from './jobListView.ts';
import type { View } from './view.ts';


const root = document.getElementById('app')!;
let cleanup: (() => void) | undefined;

/** The routes of the page, in its URL's fragment: the server serves a single page. */
function route(hash: string): { view: View } {
  const path = hash.replace(/^#/, '') || '/';
  let m: RegExpExecArray | null;
  if (path === '/jobs/new') return { view: (ctx) => jobFormView(ctx) };
  if ((m = /^\/jobs\/(\d+)\/edit$/.exec(path))) {
    const id = Number(m[1]);
    return { view: (ctx) => jobFormView(ctx, id) };
  }
  if ((m = /^\/jobs\/(\d+)\/clone$/.exec(path))) {
    const from = Number(m[1]);
    return { view: (ctx) => jobFormView(ctx, undefined, from) };
  }
  if ((m = /^\/jobs\/(\d+)$/.exec(path))) {
    const id = Number(m[1]);
    return { view: (ctx) => jobDetailView(ctx, id) };
  }
  if (path === '/channels') return { view: channelsView };
  if (path === '/groups') return { view: groupsView };
  if (path === '/account') return { view: (ctx) => accountView({ ...ctx, tokenChanged: (t) => tokenStore.set(t) }) };
  if (path === '/calendar') return { view: calendarView };
  return { view: jobListView };
}

function render() {
  cleanup?.();
  cleanup = undefined;
  const token = tokenStore.get();
  if (!token) {
    replace(root, loginView());
    return;
  }
  // Read at each send: after a rotation on the account page, the calls already queued go with the new token.
  const call = createApi(() => tokenStore.get() ?? token);
  const main = h('main', { attrs: { id: 'main', tabindex: -1 } });
  const signOut = h('button', { className: 'secondary', attrs: { type: 'button', id: 'sign-out' }, on: { click: () => signOutNow() } }, 'Sign out');
  // Routes live in the fragment, so the skip link moves the focus itself instead of following "#main".
  const skip = h('a', { className: 'skip', attrs: { href: '#main' }, on: { click: (event) => { event.preventDefault(); main.focus(); } } }, 'Skip to content');
  replace(
    root,
    skip,
    h('header', {}, h('strong', {}, 'Tock'), h('nav', { attrs: { 'aria-label': 'Main' } }, link('/', 'Jobs'), link('/jobs/new', 'New job'), link('/calendar', 'Calendar'), link('/groups', 'Groups'), link('/channels', 'Channels'), link('/account', 'Account')), signOut),
    main,
  );
  const go = (to: string) => {
    location.hash = to;
  };
  cleanup = route(location.hash).view({
    main,
    go,
    // A token revoked or rotated while the page is open: back to the sign-in form, with the reason.
    call: <T>(fn: string, params?: Params) =>
      call<T>(fn, params).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === 11) signOutNow(error.message);
        throw error;
      }),
  });
}

let signInMessage = '';
function signOutNow(message = '') {
  tokenStore.clear();
  signInMessage = message;
  render();
}

function loginView() {
  const input = h('input', { attrs: { type: 'password', id: 'token', name: 'token', autocomplete: 'off', required: true, spellcheck: 'false' } });
  const error = h('p', { className: 'error', attrs: { id: 'login-error', role: 'alert' } }, signInMessage);
  const button = h('button', { attrs: { type: 'submit' } }, 'Sign in');
  const form = h(
    'form',
    {
      className: 'login',
      attrs: { 'aria-labelledby': 'login-title' },
      on: {
        submit: (event) => {
          event.preventDefault();
          const token = input.value.trim();
          button.disabled = true;
          // The token is checked with a real call before it is kept, so a typo is told at once.
          createApi(token)('account_get')
            .then(() => {
              tokenStore.set(token);
              signInMessage = '';
              render();
            })
            .catch((e: unknown) => {
              replace(error, e instanceof ApiError && e.code === 11 ? `This token was refused: ${e.message}` : `Cannot sign in: ${(e as Error).message}`);
              button.disabled = false;
            });
        },
      },
    },
    h('h1', { attrs: { id: 'login-title' } }, 'Tock'),
    h('label', { attrs: { for: 'token' } }, 'API token'),
    input,
    h('p', { className: 'hint' }, 'Kept in this tab only (session storage) and sent to this server as a Bearer header.'),
    button,
    error,
  );
  // The page's one landmark, as on every other page.
  return h('main', { attrs: { id: 'main' } }, form);
}

window.addEventListener('hashchange', render);
render();
