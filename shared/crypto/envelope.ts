import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest: an AES-256-GCM envelope, `enc:v1:<kid>:<base64url(nonce | ciphertext | tag)>`.
 * A fresh 96-bit nonce per value; the key id travels in the envelope, so the key that sealed a
 * value is found again after a rotation (the newest key seals, every key of the ring opens).
 */
export const ENVELOPE_PREFIX = 'enc:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
// Binds a ciphertext to Tock's envelope: a value sealed for something else does not open here.
const AAD = Buffer.from('tock-secret-v1');

export interface Keyring {
  /** The id of the key that seals. */
  readonly current: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

export class EnvelopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

/** A key's id when none is given: the first 8 hex digits of its SHA-256 (never the key itself). */
export const keyIdOf = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 8);

/** 32 bytes from base64, base64url or hex text; undefined when it is none of them. */
export function decodeKey(text: string): Buffer | undefined {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return undefined;
  const key = Buffer.from(t, 'base64');
  return key.length === KEY_BYTES ? key : undefined;
}

/** A ring of keys, oldest first: the last one seals. Ids must be unique and envelope-safe. */
export function createKeyring(entries: Array<{ id?: string; key: Buffer }>): Keyring {
  if (entries.length === 0) throw new EnvelopeError('a keyring needs at least one key');
  const keys = new Map<string, Buffer>();
  let current = '';
  for (const entry of entries) {
    if (entry.key.length !== KEY_BYTES) throw new EnvelopeError(`a key must be ${KEY_BYTES} bytes, got ${entry.key.length}`);
    const id = entry.id ?? keyIdOf(entry.key);
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new EnvelopeError(`key id "${id.slice(0, 40)}" must be 1 to 32 characters from A-Z, a-z, 0-9, _ and -`);
    if (keys.has(id) && !keys.get(id)!.equals(entry.key)) throw new EnvelopeError(`two different keys have the id ${id}`);
    keys.set(id, entry.key);
    current = id;
  }
  return { current, keys };
}

/** A new random key (embedded mode's first start). */
export const generateKey = (): Buffer => randomBytes(KEY_BYTES);

export const isSealed = (value: string): boolean => value.startsWith(ENVELOPE_PREFIX);

/** Seals `plain` with the ring's current key. */
export function seal(ring: Keyring, plain: string): string {
  const key = ring.keys.get(ring.current)!;
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(AAD);
  const body = Buffer.concat([nonce, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${ENVELOPE_PREFIX}${ring.current}:${body.toString('base64url')}`;
}

/**
 * The clear value of an envelope. A value that is not an envelope is returned as it is: data
 * written before encryption existed keeps working. Throws EnvelopeError for an unknown key id or
 * a value that does not authenticate (altered, or sealed with another key under the same id).
 */
export function open(ring: Keyring, value: string): string {
  if (!isSealed(value)) return value;
  const rest = value.slice(ENVELOPE_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) throw new EnvelopeError('malformed secret envelope');
  const kid = rest.slice(0, colon);
  const key = ring.keys.get(kid);
  if (!key) throw new EnvelopeError(`secret sealed with key ${kid.slice(0, 32)}, which this service does not have`);
  const body = Buffer.from(rest.slice(colon + 1), 'base64url');
  if (body.length < NONCE_BYTES + TAG_BYTES) throw new EnvelopeError('malformed secret envelope');
  const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, NONCE_BYTES));
  decipher.setAAD(AAD);
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new EnvelopeError(`secret envelope (key ${kid}) does not authenticate`);
  }
}

/** Seal and open bound to one ring: what the services are given. */
export interface SecretBox {
  seal(plain: string): string;
  open(value: string): string;
}

export const secretBox = (ring: Keyring): SecretBox => ({ seal: (p) => seal(ring, p), open: (v) => open(ring, v) });

/** The ring's keys as text, oldest first (the sealing key last): to hand to a worker thread. */
export const exportKeys = (ring: Keyring): Array<{ id: string; key: string }> =>
  [...ring.keys].filter(([id]) => id !== ring.current).concat([[ring.current, ring.keys.get(ring.current)!]]).map(([id, key]) => ({ id, key: key.toString('base64') }));
