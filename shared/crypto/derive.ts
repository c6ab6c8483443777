import { hkdfSync } from 'node:crypto';
import type { Keyring } from './envelope.ts';

/** Keys for one purpose, derived from the secret keyring: the same ids, the last one current. */
export interface DerivedKeys {
  readonly current: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

/**
 * A key per secret key for one purpose (HKDF-SHA256, the purpose as its info): a MAC made for
 * action links can never serve as anything else, and the secret key itself never signs, so a
 * link given out says nothing about the key that seals the secrets at rest. Each derived key keeps
 * its secret key's id: after a rotation, links signed with the previous key still check out.
 */
export function deriveKeys(ring: Keyring, purpose: string): DerivedKeys {
  const keys = new Map<string, Buffer>();
  for (const [id, key] of ring.keys) keys.set(id, Buffer.from(hkdfSync('sha256', key, Buffer.from('tock-derived-key'), Buffer.from(purpose), 32)));
  return { current: ring.current, keys };
}

/** The purpose of the keys that sign notifications' action links. */
export const ACTION_LINK_KEYS = 'tock action links v1';
