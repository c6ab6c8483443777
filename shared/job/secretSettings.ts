import { MASK, maskUrl, userinfoOf } from '../urlCredentials.ts';

/**
 * Which parts of a job's settings are secrets, and how each is sealed, opened and masked. Three:
 * the password (the whole value), the credentials of the URL (the `user:pass` before the host,
 * sealed in place so the URL stays a URL whose host everyone may read) and the value of each
 * header line (names stay readable). Pure: the sealing itself is given (shared/crypto/envelope).
 */
export interface Sealer {
  seal(plain: string): string;
  open(value: string): string;
}

export { maskUrl };

// In a URL the envelope's colons would split the credentials: there it is spelled with dots.
const URL_PREFIX = 'enc.v1.';

export function sealUrl(url: string, sealer: Sealer): string {
  const parts = userinfoOf(url);
  if (!parts || parts.userinfo === '') return url;
  return `${parts.head}${sealer.seal(parts.userinfo).replaceAll(':', '.')}${parts.tail}`;
}

export function openUrl(url: string, sealer: Sealer): string {
  const parts = userinfoOf(url);
  if (!parts || !parts.userinfo.startsWith(URL_PREFIX)) return url;
  return `${parts.head}${sealer.open(parts.userinfo.replaceAll('.', ':'))}${parts.tail}`;
}

const mapHeaderValues = (text: string, fn: (value: string) => string): string =>
  text
    .split(/(\r?\n)/)
    .map((line) => {
      const colon = line.indexOf(':');
      if (colon <= 0) return line;
      const value = line.slice(colon + 1).trim();
      return value === '' ? line : `${line.slice(0, colon)}: ${fn(value)}`;
    })
    .join('');

export const sealHeaders = (text: string, sealer: Sealer): string => (text ? mapHeaderValues(text, (v) => sealer.seal(v)) : text);
export const openHeaders = (text: string, sealer: Sealer): string => (text ? mapHeaderValues(text, (v) => sealer.open(v)) : text);
/** Header names stay (they say what the job sends); every value is masked. */
export const maskHeaders = (text: string): string => (text ? mapHeaderValues(text, () => MASK) : text);

/**
 * The secret part of a URL (its credentials) or of header lines (their values, in order): what two
 * versions of a setting are compared by when only masked forms may be shown.
 */
export const urlSecret = (url: string): string => userinfoOf(url)?.userinfo ?? '';
export const headerSecrets = (text: string): string => {
  const values: string[] = [];
  mapHeaderValues(text, (value) => {
    values.push(value);
    return value;
  });
  return values.join('\n');
};

type SecretFields = { password?: unknown; url?: unknown; httpHeaders?: unknown };

/**
 * The settings with their secret parts mapped: a copy when a part changed, else the same object.
 * A job with no secret is then one settings object in memory, shared by every view folding its
 * events (the jobs view opens what the planner keeps sealed), instead of one copy per view.
 */
function mapSecrets<T extends SecretFields>(settings: T, password: (v: string) => string, url: (v: string) => string, headers: (v: string) => string): T {
  const p = typeof settings.password === 'string' && settings.password !== '' ? password(settings.password) : settings.password;
  const u = typeof settings.url === 'string' ? url(settings.url) : settings.url;
  const h = typeof settings.httpHeaders === 'string' ? headers(settings.httpHeaders) : settings.httpHeaders;
  if (p === settings.password && u === settings.url && h === settings.httpHeaders) return settings;
  const out = { ...settings };
  if (p !== settings.password) out.password = p;
  if (u !== settings.url) out.url = u;
  if (h !== settings.httpHeaders) out.httpHeaders = h;
  return out;
}

/** With every secret part sealed (settings of JobCreated, changes of JobEdited). */
export const sealSecrets = <T extends SecretFields>(settings: T, sealer: Sealer): T =>
  mapSecrets(settings, (v) => sealer.seal(v), (v) => sealUrl(v, sealer), (v) => sealHeaders(v, sealer));

/** With every sealed part opened; clear values (written before sealing existed) stay as they are. */
export const openSecrets = <T extends SecretFields>(settings: T, sealer: Sealer): T =>
  mapSecrets(settings, (v) => sealer.open(v), (v) => openUrl(v, sealer), (v) => openHeaders(v, sealer));

/** As an API answer or a log may show it. */
export const maskSecrets = <T extends SecretFields>(settings: T): T => mapSecrets(settings, () => '********', maskUrl, maskHeaders);
