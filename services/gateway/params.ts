import { AppError } from '../../shared/errors.ts';

/**
 * Request parameters as real FastCron clients send them (docs/api.md, Requests): merged from the query
 * string and the body (the body wins), names matched case-insensitively and ignoring '_'
 * (the exact camelCase spelling wins a collision), typed values coerced leniently.
 */
export type Raw = unknown;

const normalizeOnce = (name: string) => name.replace(/\[\d*\]$/, '').replace(/_/g, '').toLowerCase();
// The same few dozen names come in every element of a 1000-job batch and are looked up by every
// setting: each is worked out once. Bounded, since a client may send names without end.
const NORMALIZED_KEPT = 2048;
const normalized = new Map<string, string>();
const normalize = (name: string) => {
  let norm = normalized.get(name);
  if (norm === undefined) {
    norm = normalizeOnce(name);
    if (normalized.size < NORMALIZED_KEPT) normalized.set(name, norm);
  }
  return norm;
};

export class Params {
  private values = new Map<string, { value: Raw; exact: boolean }>();

  /** Sources in increasing precedence: later ones override earlier ones. */
  constructor(sources: Record<string, Raw>[], private canonical: (norm: string) => string | undefined = () => undefined) {
    for (const source of sources) {
      const seen = new Map<string, { value: Raw; exact: boolean; list: boolean }>();
      for (const [key, value] of Object.entries(source)) {
        const bare = key.replace(/\[\d*\]$/, '');
        // PHP's http_build_query writes a list as id[0]=1&id[1]=2; curl users write id[]=1&id[]=2.
        const list = bare !== key;
        const norm = normalize(key);
        const exact = this.canonical(norm) === bare;
        const prior = seen.get(norm);
        if (prior && prior.exact && !exact) continue;
        if (prior && prior.exact === exact && (list || prior.list || Array.isArray(prior.value) || Array.isArray(value))) {
          // Elements of one list parameter (id[0], id[1]; or id and id[]) add up; otherwise the later wins.
          seen.set(norm, { value: [...toArray(prior.value), ...toArray(value)], exact, list: true });
          continue;
        }
        seen.set(norm, { value: list ? toArray(value) : value, exact, list });
      }
      for (const [norm, { value, exact }] of seen) this.values.set(norm, { value, exact });
    }
  }

  raw(name: string): Raw {
    return this.values.get(normalize(name))?.value;
  }

  has(name: string): boolean {
    const v = this.raw(name);
    return v !== undefined;
  }

  /** A string parameter; numbers and booleans are accepted as their text. null or absent: undefined. */
  str(name: string): string | undefined {
    const v = single(name, this.raw(name));
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    throw new AppError('INVALID_PARAMETER', 'must be a string', { field: [name] });
  }

  /** Like str, but JSON null means "clear it" (""). */
  strOrClear(name: string): string | undefined {
    return this.raw(name) === null ? '' : this.str(name);
  }

  requiredStr(name: string): string {
    const v = this.str(name);
    if (v === undefined || v.trim() === '') throw new AppError('MISSING_PARAMETER', 'is required', { field: [name] });
    return v;
  }

  /** An integer from a number or a numeric string. Empty string or null: undefined. */
  int(name: string): number | undefined {
    const v = single(name, this.raw(name));
    if (v === undefined || v === null || v === '') return undefined;
    return toInt(name, v);
  }

  requiredInt(name: string): number {
    const v = this.int(name);
    if (v === undefined) throw new AppError('MISSING_PARAMETER', 'is required', { field: [name] });
    return v;
  }

  bool(name: string): boolean | undefined {
    const v = single(name, this.raw(name));
    if (v === undefined || v === null || v === '') return undefined;
    if (v === true || v === false) return v;
    // An object or list is neither: it falls through to the error below.
    const text = typeof v === 'string' || typeof v === 'number' ? String(v).trim().toLowerCase() : '';
    if (['true', '1', 'on', 'yes'].includes(text)) return true;
    if (['false', '0', 'off', 'no'].includes(text)) return false;
    throw new AppError('INVALID_PARAMETER', `must be true or false (also 1/0, on/off, yes/no), got ${JSON.stringify(v)}`, { field: [name] });
  }

  /** A list of integers: a JSON array, repeated keys, id[] keys, or a comma-separated list. */
  intList(name: string): number[] | undefined {
    let v = this.raw(name);
    if (v === undefined || v === null || v === '') return undefined;
    // PHP's json_encode turns a list with gaps into {"0": 1, "2": 3}.
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).every((k) => /^\d+$/.test(k))) v = Object.values(v);
    const items = toArray(v).flatMap((item) => (typeof item === 'string' ? item.split(',') : [item]));
    return items.filter((item) => !(typeof item === 'string' && item.trim() === '')).map((item, i) => toInt(`${name}[${i}]`, item));
  }
}

function toArray(v: Raw): Raw[] {
  return Array.isArray(v) ? v : [v];
}

function single(name: string, v: Raw): Raw {
  if (!Array.isArray(v)) return v;
  if (v.length === 1) return v[0];
  // Repeated keys: the last one wins, as in PHP.
  if (v.every((x) => typeof x !== 'object' || x === null)) return v[v.length - 1];
  throw new AppError('INVALID_PARAMETER', 'must be a single value, not a list', { field: [name] });
}

function toInt(name: string, v: Raw): number {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^\s*[-+]?\d{1,15}\s*$/.test(v)) return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  throw new AppError('INVALID_PARAMETER', `must be an integer, got ${JSON.stringify(v)?.slice(0, 60)}`, { field: [name] });
}
