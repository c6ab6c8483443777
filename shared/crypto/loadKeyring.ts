import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.ts';
import { createKeyring, decodeKey, EnvelopeError, generateKey, type Keyring } from './envelope.ts';

/** Embedded mode's key file when none is configured: `<DATA_DIR>/secret.key`. */
export const EMBEDDED_KEY_FILE = 'secret.key';

/**
 * A key file: one key per line (base64 or hex of 32 bytes), optionally `<id>:<key>`; blank lines
 * and `#` comments are skipped. Oldest first: the last key seals, every key opens.
 */
export function parseKeyFile(text: string, where: string): Array<{ id?: string; key: Buffer }> {
  const entries: Array<{ id?: string; key: Buffer }> = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    const id = colon > 0 ? line.slice(0, colon).trim() : undefined;
    const key = decodeKey(colon > 0 ? line.slice(colon + 1) : line);
    if (!key) throw new ConfigError([`${where}: line ${i + 1} is not a 32-byte key in base64 or hex (optionally "<id>:<key>")`]);
    entries.push({ id, key });
  });
  if (entries.length === 0) throw new ConfigError([`${where}: holds no key`]);
  return entries;
}

function readKeyFile(path: string): Array<{ id?: string; key: Buffer }> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`TOCK_SECRET_KEY_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  return parseKeyFile(text, `TOCK_SECRET_KEY_FILE (${path})`);
}

export interface KeySettings {
  TOCK_SECRET_KEY?: string;
  TOCK_SECRET_KEY_FILE?: string;
}

/**
 * The keyring that seals and opens job secrets: the keys of TOCK_SECRET_KEY_FILE, then
 * TOCK_SECRET_KEY (which, when both are set, is the newest and seals). With neither:
 * `generateIn` (embedded mode's DATA_DIR) gets a new key file, mode 0600, kept for the next start;
 * without it the service refuses to start (ConfigError).
 */
export function loadKeyring(settings: KeySettings, options: { generateIn?: string; service?: string } = {}): Keyring {
  const entries: Array<{ id?: string; key: Buffer }> = [];
  if (settings.TOCK_SECRET_KEY_FILE) entries.push(...readKeyFile(settings.TOCK_SECRET_KEY_FILE));
  if (settings.TOCK_SECRET_KEY) {
    const key = decodeKey(settings.TOCK_SECRET_KEY);
    if (!key) throw new ConfigError(['TOCK_SECRET_KEY: must be 32 bytes in base64 or hex (e.g. openssl rand -base64 32)']);
    entries.push({ key });
  }
  if (entries.length === 0 && options.generateIn) {
    const path = join(options.generateIn, EMBEDDED_KEY_FILE);
    if (!existsSync(path)) {
      mkdirSync(options.generateIn, { recursive: true, mode: 0o700 });
      writeFileSync(path, `# Tock's key for job secrets at rest. Keep it: without it stored passwords cannot be read.\n${generateKey().toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } else if ((statSync(path).mode & 0o077) !== 0) {
      chmodSync(path, 0o600);
    }
    entries.push(...readKeyFile(path));
  }
  if (entries.length === 0) {
    const who = options.service ? `the ${options.service} service` : 'this service';
    throw new ConfigError([`TOCK_SECRET_KEY: required by ${who} (job and channel secrets are encrypted at rest); set it or TOCK_SECRET_KEY_FILE`]);
  }
  try {
    return createKeyring(entries);
  } catch (error) {
    if (error instanceof EnvelopeError) throw new ConfigError([`TOCK_SECRET_KEY_FILE: ${error.message}`]);
    throw error;
  }
}

/** For a main(): the keyring, or one line per problem and exit 1. */
export function loadKeyringOrExit(settings: KeySettings, options: { generateIn?: string; service?: string } = {}): Keyring {
  try {
    return loadKeyring(settings, options);
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const line of error.problems) process.stderr.write(`config error: ${line}\n`);
      process.exit(1);
    }
    throw error;
  }
}
