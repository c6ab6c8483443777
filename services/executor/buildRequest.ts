import type { TargetSettings } from '../../shared/job/index.ts';
import { bodyKind } from '../../shared/payload.ts';
import { SIGNATURE_HEADER, type SigningKey } from '../../shared/signing.ts';

/** What the executor needs of a job to call it: the settings the SETTINGS table marks `target`. */
export type RunJob = TargetSettings & { id: number };

export interface RunInfo {
  runId: string;
  scheduledAt: number /* ms */;
  payload: string | null;
  /** The account's signing keys; none: the request goes unsigned. */
  signing?: readonly SigningKey[];
  /** Which attempt of the occurrence (1 the first); sent as X-Tock-Attempt past the first. */
  attempt?: number;
  /** A test call (cron_test), no run of the job: sent as X-Tock-Test: 1. */
  test?: boolean;
}

export interface RequestSpec {
  method: string;
  url: string;
  headers: Record<string, string>;
  /**
   * The headers that may follow a redirect to another origin: Tock's own, and Tock's default
   * User-Agent. None of the job's (header lines, credentials, its User-Agent). Absent: none.
   */
  anyOriginHeaders?: Record<string, string>;
  body: string | null;
  timeoutMs: number;
  /**
   * Keys for X-Tock-Signature, which is computed by the sender at the instant each request (and
   * each redirect hop) goes out, over the method, URL and body of that very request.
   */
  signing?: readonly SigningKey[];
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const DEFAULT_TIMEOUT_S = 30;

// The HTTP client frames the message itself; these from a job would corrupt it or be refused.
const CONNECTION_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer']);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Bytes a header value may carry on the wire; anything else would be refused by the client.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Replaces FC's run-time keywords. `__timestamp_ms__` goes first so its prefix is never eaten. */
export function replaceKeywords(text: string, jobId: number, scheduledAtMs: number): string {
  // Every keyword starts so; most header lines and bodies have none (this runs on every run).
  if (!text.includes('__')) return text;
  const ms = Number.isFinite(scheduledAtMs) ? Math.floor(scheduledAtMs) : 0;
  return text
    .split('__timestamp_ms__').join(String(ms))
    .split('__timestamp__').join(String(Math.floor(ms / 1000)))
    .split('__cronjob__').join(String(jobId));
}

/** `Name: value` lines separated by CRLF or LF; malformed lines are skipped, not fatal. */
export function parseHeaderLines(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const line of String(text ?? '').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trimEnd();
    const value = line.slice(colon + 1).trim();
    if (!TOKEN.test(name) || !HEADER_VALUE.test(value)) continue;
    out.push([name, value]);
  }
  return out;
}

/** A header map with case-insensitive set/has that keeps the first spelling of each name. */
class HeaderMap {
  private readonly map = new Map<string, [string, string]>();
  set(name: string, value: string): void {
    const key = name.toLowerCase();
    this.map.set(key, [this.map.get(key)?.[0] ?? name, value]);
  }
  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }
  delete(name: string): void {
    this.map.delete(name.toLowerCase());
  }
  toRecord(): Record<string, string> {
    return Object.fromEntries(this.map.values());
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Removes `user:pass@` from the URL; returns the credentials percent-decoded. */
export function splitUrlCredentials(url: string): { url: string; username: string; password: string } {
  // A URL has credentials only before an '@': without one there is nothing to parse on every run.
  if (!url.includes('@')) return { url, username: '', password: '' };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Left as it is: the caller reports the invalid URL as the run's error.
    return { url, username: '', password: '' };
  }
  if (parsed.username === '' && parsed.password === '') return { url, username: '', password: '' };
  const username = safeDecode(parsed.username);
  const password = safeDecode(parsed.password);
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, username, password };
}

/** Appends a query string, before any fragment, choosing `?` or `&`. */
export function appendQuery(url: string, query: string): string {
  const q = query.replace(/^[?&]+/, '');
  if (q === '') return url;
  const hash = url.indexOf('#');
  const base = hash >= 0 ? url.slice(0, hash) : url;
  const fragment = hash >= 0 ? url.slice(hash) : '';
  const sep = !base.includes('?') ? '?' : /[?&]$/.test(base) ? '' : '&';
  return `${base}${sep}${q}${fragment}`;
}

const base64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const headerSafe = (s: string): string => String(s ?? '').replace(/[^\t\x20-\x7e\x80-\xff]/g, '');

/**
 * The HTTP request for one run of a job: pure, total (never throws), so it can be tested on every
 * rule and the I/O edge only has to send what it gets.
 */
export function buildRequest(job: RunJob, run: RunInfo, options: { userAgent: string }): RequestSpec {
  const method = METHODS.has(String(job.httpMethod).toUpperCase()) ? String(job.httpMethod).toUpperCase() : 'GET';
  const kw = (s: string) => replaceKeywords(String(s ?? ''), job.id, run.scheduledAt);
  const payload = typeof run.payload === 'string' && run.payload !== '' ? kw(run.payload) : null;

  const creds = splitUrlCredentials(kw(job.url));
  let url = creds.url;
  let body: string | null = null;
  if (BODY_METHODS.has(method)) body = payload ?? kw(job.postData);
  else if (payload !== null) url = appendQuery(url, payload);

  const headers = new HeaderMap();
  for (const [name, value] of parseHeaderLines(kw(job.httpHeaders))) {
    if (!CONNECTION_HEADERS.has(name.toLowerCase())) headers.set(name, value);
  }

  // The job's own fields are more specific than a header line that happens to say the same.
  const username = job.username || job.password ? String(job.username ?? '') : creds.username;
  const password = job.username || job.password ? String(job.password ?? '') : creds.password;
  if (username !== '' || password !== '') headers.set('Authorization', `Basic ${base64(`${username}:${password}`)}`);

  const agent = headerSafe(job.userAgent);
  if (agent !== '') headers.set('User-Agent', agent);
  else if (!headers.has('User-Agent')) headers.set('User-Agent', headerSafe(options.userAgent));

  if (body !== null && !headers.has('Content-Type')) {
    const kind = bodyKind(body);
    if (kind === 'json') headers.set('Content-Type', 'application/json');
    else if (kind === 'query') headers.set('Content-Type', 'application/x-www-form-urlencoded');
  }

  // Ours, so a target can de-duplicate; a job's header must not be able to forge them.
  for (const name of ['X-Tock-Job-Id', 'X-Tock-Scheduled-Time', 'X-Tock-Run-Id', 'X-Tock-Attempt', 'X-Tock-Test', SIGNATURE_HEADER]) headers.delete(name);
  const tocks: Record<string, string> = {
    'X-Tock-Job-Id': String(job.id),
    'X-Tock-Scheduled-Time': kw('__timestamp__'),
    'X-Tock-Run-Id': headerSafe(run.runId),
    ...(run.attempt && run.attempt > 1 ? { 'X-Tock-Attempt': String(run.attempt) } : {}),
    ...(run.test ? { 'X-Tock-Test': '1' } : {}),
  };
  for (const [name, value] of Object.entries(tocks)) headers.set(name, value);
  const anyOriginHeaders = { 'User-Agent': headerSafe(options.userAgent), ...tocks };

  const seconds = Number(job.timeout);
  const timeoutMs = Math.round((Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TIMEOUT_S) * 1000);

  return { method, url, headers: headers.toRecord(), anyOriginHeaders, body, timeoutMs, signing: run.signing };
}
