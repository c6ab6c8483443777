import { createHash } from 'node:crypto';

/**
 * The pages of action links: plain HTML with one inline style, allowed by its hash alone. No
 * script, no image, no external asset, nothing that can be framed; a form may post to this server only.
 */
const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}' +
  'h1{font-size:1.4rem}button{font-size:1rem;padding:.5rem 1.2rem;cursor:pointer}' +
  'table{border-collapse:collapse;font-size:.9rem}td,th{border-bottom:1px solid #ddd;padding:.3rem .6rem;text-align:left}' +
  '.failed{color:#b00020}.note{color:#666;font-size:.9rem}';

export const ACTION_PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'X-Robots-Tag': 'noindex, nofollow',
};

export const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** A whole page; `body` is HTML already escaped. */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex,nofollow"><title>${escapeHtml(title)} - Tock</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/**
 * The confirmation form. It posts to `/a/` relative to the page (so a Tock behind a path prefix
 * works), the token in the body: a POST, never the GET a mail scanner makes, is what acts.
 */
export function confirmForm(token: string, button: string): string {
  return `<form method="post" action="./"><input type="hidden" name="token" value="${escapeHtml(token)}"><button type="submit">${escapeHtml(button)}</button></form>`;
}

export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
