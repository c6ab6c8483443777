import { Kvm, type KV } from '@nats-io/kv';
import type { NatsAuth } from '../bus/natsAuth.ts';
import { connectLasting } from '../bus/natsConnection.ts';
import { createLogger, type Logger } from '../log.ts';
import type { Readiness } from '../readiness.ts';
import { takeSlot, type Holders, type Leases } from './leases.ts';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Leases in a NATS KV bucket: each key holds its holders as JSON, changed only with
 * compare-and-set on the entry's revision, so replicas racing for the last slot cannot both win.
 */
export async function connectNatsLeases(
  url: string,
  bucket = 'tock_instances',
  now: () => number = Date.now,
  options: { readiness?: Readiness; log?: Logger; auth?: NatsAuth } = {},
): Promise<Leases> {
  // Reconnects forever, as the bus does: the executor outlives any NATS restart.
  const create = (kvm: Kvm) => kvm.create(bucket, { history: 1 });
  const conn = await connectLasting({
    url,
    name: 'tock-leases',
    auth: options.auth,
    log: options.log ?? createLogger('leases', {}, 'warn'),
    onStatus: async (status) => {
      if (status.type === 'disconnect') options.readiness?.set('leases', false, `disconnected from NATS (${status.server})`);
      else if (status.type === 'reconnect') {
        // A server that came back without its state has no bucket: make it again (a no-op otherwise).
        await create(new Kvm(conn.nc)).catch((error) => options.log?.warn('leases bucket not restored after reconnect', { bucket, error }));
        options.readiness?.set('leases', true);
      }
    },
    onLost: (reason) => options.readiness?.set('leases', false, `NATS connection closed (${reason}); opening a new one`),
    onReplaced: async (nc) => {
      kv = await create(new Kvm(nc));
      options.readiness?.set('leases', true);
    },
  });
  let kv: KV = await create(new Kvm(conn.nc));
  options.readiness?.set('leases', true);

  const change = async (key: string, fn: (holders: Holders) => Holders | null): Promise<boolean> => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const entry = await kv.get(key);
      const exists = entry !== null && entry.operation === 'PUT';
      const holders: Holders = exists && entry.value.length ? (JSON.parse(decoder.decode(entry.value)) as Holders) : {};
      const next = fn(holders);
      if (next === null) return false;
      try {
        if (exists) await kv.update(key, encoder.encode(JSON.stringify(next)), entry.revision);
        else if (entry) await kv.update(key, encoder.encode(JSON.stringify(next)), entry.revision);
        else await kv.create(key, encoder.encode(JSON.stringify(next)));
        return true;
      } catch (error) {
        // Someone else changed the key since we read it: read again and retry.
        if (!/wrong last sequence|key exists|revision/i.test(String((error as Error).message))) throw error;
      }
    }
    throw new Error(`lease ${key}: too much contention`);
  };

  return {
    acquire: (key, holder, max, ttlMs) => change(key, (holders) => takeSlot(holders, holder, max, ttlMs, now())),
    async release(key, holder) {
      await change(key, (holders) => {
        const next = { ...holders };
        delete next[holder];
        return next;
      });
    },
    async close() {
      await conn.drain();
    },
  };
}
