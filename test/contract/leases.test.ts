import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createMemoryLeases, type Leases } from '../../shared/leases/leases.ts';
import { connectNatsLeases } from '../../shared/leases/natsLeases.ts';
import { nth } from '../support/nth.ts';
import { privateNats } from '../support/natsServer.ts';


function leasesContract(name: string, open: (now: () => number) => Promise<Leases[]>) {
  describe(`Leases contract: ${name}`, () => {
    let t = 1_000_000;
    const now = () => t;
    let replicas: Leases[] = [];
    beforeEach(async () => {
      replicas = await open(now);
    });
    afterEach(async () => {
      for (const r of replicas) await r.close();
    });

    it('grants at most max slots, renews the same holder, frees on release', async () => {
      const key = `k-${randomUUID()}`;
      const a = nth(replicas);
      expect(await a.acquire(key, 'run1', 2, 60_000)).to.equal(true);
      expect(await a.acquire(key, 'run2', 2, 60_000)).to.equal(true);
      expect(await a.acquire(key, 'run3', 2, 60_000)).to.equal(false);
      expect(await a.acquire(key, 'run1', 2, 60_000)).to.equal(true);
      await a.release(key, 'run1');
      expect(await a.acquire(key, 'run3', 2, 60_000)).to.equal(true);
    });

    it('frees a slot whose holder never released it once its lease expires', async () => {
      const key = `k-${randomUUID()}`;
      const a = nth(replicas);
      expect(await a.acquire(key, 'dead', 1, 5_000)).to.equal(true);
      expect(await a.acquire(key, 'next', 1, 5_000)).to.equal(false);
      t += 5_001;
      expect(await a.acquire(key, 'next', 1, 5_000)).to.equal(true);
    });

    it('lets exactly max of many concurrent holders in, across replicas', async () => {
      const key = `k-${randomUUID()}`;
      const attempts = Array.from({ length: 30 }, (_, i) => replicas[i % replicas.length]!.acquire(key, `run${i}`, 3, 60_000));
      const granted = (await Promise.all(attempts)).filter(Boolean).length;
      expect(granted).to.equal(3);
    });
  });
}

leasesContract('memory', async (now) => {
  const shared = createMemoryLeases(now);
  return [shared];
});
// A nats-server of this file's own for the key-value bucket.
const nats = await privateNats();
after(() => nats.stop());
leasesContract('nats kv', async (now) => Promise.all([1, 2, 3].map(() => connectNatsLeases(nats.url, 'tock_test_leases', now))));
