import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../../shared/config.ts';
import { createKeyring, EnvelopeError, exportKeys, isSealed, keyIdOf, open, seal } from '../../../shared/crypto/envelope.ts';
import { EMBEDDED_KEY_FILE, loadKeyring } from '../../../shared/crypto/loadKeyring.ts';

const oldKey = Buffer.alloc(32, 1);
const newKey = Buffer.alloc(32, 2);

describe('secret envelope (AES-256-GCM)', () => {
  it('seals to enc:v1:<kid>:<base64url> with a fresh nonce each time, and opens back', () => {
    const ring = createKeyring([{ key: oldKey }]);
    const a = seal(ring, 's3cret pässword');
    const b = seal(ring, 's3cret pässword');
    expect(a).to.match(new RegExp(`^enc:v1:${keyIdOf(oldKey)}:[A-Za-z0-9_-]+$`));
    expect(a).to.not.equal(b);
    expect(a).to.not.include('s3cret');
    expect(open(ring, a)).to.equal('s3cret pässword');
    expect(open(ring, '')).to.equal('');
    expect(open(ring, seal(ring, ''))).to.equal('');
  });

  it('reads a value written before sealing existed as it is', () => {
    expect(open(createKeyring([{ key: oldKey }]), 'plain-password')).to.equal('plain-password');
    expect(isSealed('plain-password')).to.equal(false);
  });

  it('rotates: the newest key seals, an older key of the ring still opens what it sealed', () => {
    const before = createKeyring([{ key: oldKey }]);
    const sealedBefore = seal(before, 'old secret');
    const after = createKeyring([{ key: oldKey }, { key: newKey }]);
    expect(after.current).to.equal(keyIdOf(newKey));
    expect(open(after, sealedBefore)).to.equal('old secret');
    const sealedAfter = seal(after, 'new secret');
    expect(sealedAfter.split(':')[2]).to.equal(keyIdOf(newKey));
    expect(() => open(before, sealedAfter)).to.throw(EnvelopeError, /does not have/);
  });

  it('refuses an altered value, and one sealed with another key under the same id', () => {
    const ring = createKeyring([{ id: 'k1', key: oldKey }]);
    const sealed = seal(ring, 'secret');
    const body = Buffer.from(sealed.split(':')[3]!, 'base64url');
    body[body.length - 20]! ^= 1;
    expect(() => open(ring, `enc:v1:k1:${body.toString('base64url')}`)).to.throw(EnvelopeError, /does not authenticate/);
    expect(() => open(createKeyring([{ id: 'k1', key: newKey }]), sealed)).to.throw(EnvelopeError, /does not authenticate/);
    expect(() => open(ring, 'enc:v1:k1:AAAA')).to.throw(EnvelopeError, /malformed/);
  });

  it('crosses to a worker thread as text and comes back the same ring', () => {
    const ring = createKeyring([{ key: oldKey }, { id: 'new', key: newKey }]);
    const again = createKeyring(exportKeys(ring).map((k) => ({ id: k.id, key: Buffer.from(k.key, 'base64') })));
    expect(again.current).to.equal('new');
    expect(open(again, seal(ring, 'x'))).to.equal('x');
    expect(open(ring, seal(createKeyring([{ key: oldKey }]), 'y'))).to.equal('y');
  });
});

describe('secret keys from the configuration', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tock-keys-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('TOCK_SECRET_KEY must be 32 bytes in base64 or hex', () => {
    expect(() => loadConfig({ TOCK_SECRET_KEY: 'short' })).to.throw(ConfigError, /TOCK_SECRET_KEY: must be 32 bytes/);
    expect(() => loadConfig({ TOCK_SECRET_KEY: Buffer.alloc(16).toString('base64') })).to.throw(ConfigError, /TOCK_SECRET_KEY/);
    expect(loadConfig({ TOCK_SECRET_KEY: newKey.toString('hex') }).TOCK_SECRET_KEY).to.equal(newKey.toString('hex'));
    expect(loadKeyring({ TOCK_SECRET_KEY: newKey.toString('base64') }).current).to.equal(keyIdOf(newKey));
  });

  it('a service that needs the key and has none refuses to start, naming the variable', () => {
    expect(() => loadKeyring({}, { service: 'jobs' })).to.throw(ConfigError, /TOCK_SECRET_KEY: required by the jobs service/);
  });

  it('a key file holds several keys for rotation: the last seals, all open; a bad line is named', () => {
    const file = join(dir, 'keys');
    writeFileSync(file, `# rotated 2026-11\nold:${oldKey.toString('base64')}\n\n${newKey.toString('hex')}\n`);
    const ring = loadKeyring({ TOCK_SECRET_KEY_FILE: file });
    expect([...ring.keys.keys()]).to.deep.equal(['old', keyIdOf(newKey)]);
    expect(ring.current).to.equal(keyIdOf(newKey));
    writeFileSync(file, `${oldKey.toString('base64')}\nnot a key\n`);
    expect(() => loadKeyring({ TOCK_SECRET_KEY_FILE: file })).to.throw(ConfigError, /line 2 is not a 32-byte key/);
    expect(() => loadKeyring({ TOCK_SECRET_KEY_FILE: join(dir, 'missing') })).to.throw(ConfigError, /cannot read .*ENOENT/);
  });

  it('embedded mode generates a key file, mode 0600, in a 0700 directory, and keeps it', () => {
    const dataDir = join(dir, 'data');
    const first = loadKeyring({}, { generateIn: dataDir });
    const path = join(dataDir, EMBEDDED_KEY_FILE);
    expect(statSync(path).mode & 0o777).to.equal(0o600);
    expect(statSync(dataDir).mode & 0o777).to.equal(0o700);
    const again = loadKeyring({}, { generateIn: dataDir });
    expect(again.current).to.equal(first.current);
    expect(open(again, seal(first, 'kept'))).to.equal('kept');
  });
});
