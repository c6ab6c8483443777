/**
 * The credentials of a URL (the userinfo before the host, `user:pass@` or `token@`): found in one
 * place and masked one way, `***@`, wherever a URL is shown (API answers, events, logs). Sealing
 * (shared/job/secretSettings.ts) splits a URL with the same function, so what is sealed and what
 * is masked are the same part.
 */

export const MASK = '***';

const AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#\\]*)/i;

/** The URL split at its credentials, or null when it has none. The last `@` of the authority ends them. */
export function userinfoOf(url: string): { head: string; userinfo: string; tail: string } | null {
  const m = AUTHORITY.exec(url);
  if (!m) return null;
  const [, head = '', authority = ''] = m;
  const at = authority.lastIndexOf('@');
  if (at < 0) return null;
  return { head, userinfo: authority.slice(0, at), tail: url.slice(head.length + at) };
}

/** The URL as anyone may see it: credentials, sealed or not, become `***`. */
export function maskUrl(url: string): string {
  const parts = userinfoOf(url);
  return parts ? `${parts.head}${MASK}${parts.tail}` : url;
}

// scheme://userinfo@ inside free text: the authority ends at whitespace too.
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^\s/?#\\@]+@/gi;

/** Every URL in a text (a log message, an error) with its credentials masked the same way. */
export const maskUrlsIn = (text: string): string => (text.includes('@') ? text.replace(URL_CREDENTIALS, `$1${MASK}@`) : text);
