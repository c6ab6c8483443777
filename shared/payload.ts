import { AppError } from './errors.ts';

/**
 * Payload rules (docs/api.md, What every call to your URL carries). Shared by the gateway (reject a bad payload with error 3
 * before anything is stored) and the executor (decide the Content-Type), so both read one rule.
 */

export type BodyKind = 'json' | 'query';

const QUERY_ONLY_METHODS = new Set(['GET', 'HEAD', 'DELETE']);

/**
 * FC's test, not a general sniff: a newline, or a leading `{`/`[`, means the caller meant JSON.
 * Leading whitespace is skipped so a pretty-printed document still counts.
 */
export function looksLikeJson(text: string): boolean {
  return /[\r\n]/.test(text) || /^\s*[{[]/.test(text);
}

export function isValidJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A query string as far as a URL or a form body can carry it. Deliberately lenient (spaces and
 * non-ASCII are fine, real clients send them); only what would break the request is refused:
 * control characters, and `#`, which would cut the URL short.
 */
export function queryStringProblem(text: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) return 'must not contain control characters or line breaks';
  if (text.includes('#')) return 'must not contain "#"';
  return null;
}

export function validatePayload(payload: string, httpMethod: string): { kind: BodyKind } {
  if (typeof payload !== 'string') throw new AppError('INVALID_PARAMETER', 'must be a string', { field: ['payload'] });
  const method = String(httpMethod ?? '').toUpperCase();
  if (looksLikeJson(payload)) {
    if (!isValidJson(payload)) {
      throw new AppError('INVALID_PARAMETER', 'starts with "{" or "[" or has a line break, so it must be valid JSON, and it is not', { field: ['payload'] });
    }
    if (QUERY_ONLY_METHODS.has(method)) {
      throw new AppError('INVALID_PARAMETER', `must be a query string (name=value&name2=value2) for a ${method} job, not JSON`, { field: ['payload'] });
    }
    return { kind: 'json' };
  }
  const problem = queryStringProblem(payload);
  if (problem) throw new AppError('INVALID_PARAMETER', `a query string (name=value&name2=value2) ${problem}`, { field: ['payload'] });
  return { kind: 'query' };
}

/**
 * The kind of a request body, for the Content-Type. Never throws: postData was not necessarily
 * validated, and a body that is neither JSON nor a query string simply gets no Content-Type.
 */
export function bodyKind(body: string): BodyKind | null {
  if (body === '') return null;
  if (looksLikeJson(body)) return isValidJson(body) ? 'json' : null;
  return queryStringProblem(body) === null ? 'query' : null;
}
