import type { IncomingMessage } from 'node:http';
import { AppError } from '../../shared/errors.ts';

export const BODY_LIMIT = 1024 * 1024;

export interface ParsedBody {
  fields: Record<string, unknown>;
  /** The JSON object when the body was JSON. */
  json: Record<string, unknown> | null;
}

/** Reads at most 1 MiB; a larger body is refused while it streams in (error 13, HTTP 413). */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > BODY_LIMIT) throw new AppError('BODY_TOO_LARGE', `request body: at most ${BODY_LIMIT} bytes, got ${declared}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new AppError('BODY_TOO_LARGE', `request body: at most ${BODY_LIMIT} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A query string as an object; a repeated key becomes an array. */
export function parseQuery(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const prior = out[key];
    out[key] = prior === undefined ? value : Array.isArray(prior) ? [...(prior as unknown[]), value] : [prior, value];
  }
  return out;
}

/** docs/api.md (Requests): JSON or form by Content-Type; a body starting with `{` or `[` is JSON. Multipart for PHP's curl arrays. */
export function parseBody(raw: Buffer, contentType: string | undefined): ParsedBody {
  // A byte-order mark (some Windows clients write one) is not part of the parameters.
  const text = raw.toString('utf8').replace(/^\uFEFF/, '');
  if (!text.trim()) return { fields: {}, json: null };
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') return { fields: parseMultipart(text, contentType!), json: null };
  const looksJson = /^\s*[[{]/.test(text);
  const declaredJson = type.endsWith('/json') || type.endsWith('+json');
  // JSON when declared (application/json, text/json, +json) or when it looks like it: clients send
  // JSON as text/plain, octet-stream, with no type, and (PHP's curl default) even as a form.
  if (declaredJson || looksJson) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // A declared form that merely starts with a bracket is still a form.
      if (type === 'application/x-www-form-urlencoded') return { fields: parseQuery(text), json: null };
      throw new AppError('MALFORMED_BODY', `request body: malformed JSON (${(error as Error).message})`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new AppError('MALFORMED_BODY', 'request body: JSON must be an object of parameters');
    return { fields: value as Record<string, unknown>, json: value as Record<string, unknown> };
  }
  return { fields: parseQuery(text), json: null };
}

function parseMultipart(text: string, contentType: string): Record<string, unknown> {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) throw new AppError('MALFORMED_BODY', 'request body: multipart without a boundary');
  const out: Record<string, unknown> = {};
  for (const part of text.split(`--${boundary}`)) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    // `name=`, not the `filename=` that may come first.
    const name = /(?:^|[;\s])name="([^"]*)"/i.exec(part.slice(0, split))?.[1];
    if (name === undefined) continue;
    const value = part.slice(split + 4).replace(/\r\n$/, '');
    const prior = out[name];
    out[name] = prior === undefined ? value : Array.isArray(prior) ? [...(prior as unknown[]), value] : [prior, value];
  }
  return out;
}
