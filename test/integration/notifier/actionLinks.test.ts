import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACTION_LINK_KEYS, deriveKeys } from '../../../shared/crypto/derive.ts';
import { createKeyring, generateKey } from '../../../shared/crypto/envelope.ts';
import type { EventStore } from '../../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { createActionLinks, LINK_TTL_MS } from '../../../services/notifier/actionLinks.ts';

const token = (link: string) => link.slice(link.indexOf('/a/') + 3);

/**
 * The notifier's action links against a real event store file that two "replicas" (two processes'
 * worth of link services, each with its own connection) share.
 */
describe('action links: signing, expiry and spending once across replicas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tock-links-'));
  const stores: EventStore[] = [];
  const key = generateKey();
  const ring = createKeyring([{ key }]);
  const now = Date.UTC(2026, 10, 26, 12);
  const links = (keys = deriveKeys(ring, ACTION_LINK_KEYS)) => {
    const store = openSqliteEventStore(join(dir, 'events.db'));
    stores.push(store);
    return createActionLinks({ keys, publicUrl: 'https://tock.example.com/', store });
  };
  after(async () => {
    for (const s of stores) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs with a key derived for action links alone: neither the secret key nor another purpose signs one', async () => {
    const a = links();
    const made = a.linksFor(7, 42, now);
    expect(made.run.startsWith('https://tock.example.com/a/')).to.equal(true);
    const [kid, payload, mac] = token(made.run).split('.') as [string, string, string];
    expect(kid).to.equal(ring.current);
    const raw = createHmac('sha256', key).update(`tock-action-link.${kid}.${payload}`).digest('base64url');
    expect(raw).to.not.equal(mac);
    const other = links(deriveKeys(ring, 'another purpose'));
    expect((await other.check(token(made.run), now)).state).to.equal('invalid');
    expect(await a.check(token(made.run), now)).to.deep.include({ state: 'valid' });
    expect((await a.check(token(made.run), now)).claims).to.include({ accountId: 7, jobId: 42, action: 'run', expiresAt: now + LINK_TTL_MS });
  });

  it('keeps working after the secret key is rotated, and not with a key the notifier lacks', async () => {
    const before = links().linksFor(1, 2, now);
    const rotated = createKeyring([{ key }, { key: generateKey() }]);
    const after = links(deriveKeys(rotated, ACTION_LINK_KEYS));
    expect((await after.check(token(before.pause1h), now)).state).to.equal('valid');
    expect(token(after.linksFor(1, 2, now).run).split('.')[0]).to.equal(rotated.current);
    const stranger = links(deriveKeys(createKeyring([{ key: generateKey() }]), ACTION_LINK_KEYS));
    expect((await stranger.check(token(before.pause1h), now)).state).to.equal('invalid');
  });

  it('spends an acting link once: of many uses at the same time on two replicas, one succeeds', async () => {
    const [a, b] = [links(), links()];
    const link = token(a.linksFor(3, 4, now).silence);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).use(link, now)));
    expect(answers.filter((x) => x.state === 'valid')).to.have.length(1);
    expect(answers.filter((x) => x.state === 'used')).to.have.length(9);
    expect((await b.check(link, now)).state).to.equal('used');
  });

  it('refuses an expired link, and never spends a logs link', async () => {
    const a = links();
    const made = a.linksFor(5, 6, now);
    expect((await a.check(token(made.run), now + LINK_TTL_MS - 1)).state).to.equal('valid');
    expect((await a.check(token(made.run), now + LINK_TTL_MS)).state).to.equal('expired');
    expect((await a.use(token(made.run), now + LINK_TTL_MS)).state).to.equal('expired');
    expect((await a.use(token(made.logs), now)).state).to.equal('invalid');
    expect((await a.check(token(made.logs), now)).state).to.equal('valid');
    expect((await a.check(token(made.logs), now)).state).to.equal('valid');
  });
});
