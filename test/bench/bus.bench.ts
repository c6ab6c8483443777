/**
 * Bus throughput: `npx tsx test/bench/bus.bench.ts`. Measures raw nats.js JetStream (the
 * yardstick) next to the NATS adapter, then the in-process bus. Deletes its streams and exits.
 * NATS_URL overrides the server; BENCH_N the message count.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Bus } from '../../shared/bus/bus.ts';
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const N = Number(process.env.BENCH_N ?? 20_000);
const IN_FLIGHT = 100;
const payload = new Uint8Array(256).fill(120);
const ROUNDS = 3; // alternating raw and adapter, best of each: warm-up and server noise hit both alike
const runId = Math.random().toString(36).slice(2, 8);

/** Runs `op(i)` for i < n with at most `window` outstanding; returns ops per second. */
async function windowed(n: number, window: number, op: (i: number) => Promise<unknown>) {
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: window }, worker));
  return n / ((performance.now() - start) / 1000);
}

/** Publishes n messages (window of IN_FLIGHT) while a consumer acks them; ends when all are acked. */
async function pipeline(n: number, publish: (i: number) => Promise<unknown>, startConsumer: (onAck: () => void) => Promise<() => Promise<void>>) {
  let acked = 0;
  let allAcked!: () => void;
  const done = new Promise<void>((r) => (allAcked = r));
  const stop = await startConsumer(() => {
    if (++acked === n) allAcked();
  });
  const start = performance.now();
  await windowed(n, IN_FLIGHT, publish);
  await done;
  const rate = n / ((performance.now() - start) / 1000);
  await stop();
  return rate;
}

type Figures = { publish: number; e2e: number };

async function busFigures(bus: Bus, prefix: string, tag: string): Promise<Figures> {
  const stream = (suffix: string) => ({ name: `${prefix}_${suffix}_${tag}`, subject: `${prefix.toLowerCase()}${suffix}${tag}.job` });
  const pub = stream('PUB');
  await bus.ensureStream({ name: pub.name, subjects: [pub.subject], retention: 'limits', duplicateWindowMs: 60_000 });
  const publish = await windowed(N, IN_FLIGHT, (i) => bus.publish(pub.subject, payload, { msgId: `p${i}` }));
  const wq = stream('WQ');
  await bus.ensureStream({ name: wq.name, subjects: [wq.subject], retention: 'workqueue', duplicateWindowMs: 60_000 });
  const e2e = await pipeline(
    N,
    (i) => bus.publish(wq.subject, payload, { msgId: `w${i}` }),
    async (onAck) => {
      const consumer = await bus.consume({ stream: wq.name, durable: 'bench', ackWaitMs: 30_000 }, async (m) => {
        await m.ack();
        onAck();
      });
      return () => consumer.stop();
    },
  );
  return { publish, e2e };
}

async function rawFigures(nc: NatsConnection, tag: string): Promise<Figures> {
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const names = [`RAW_PUB_${tag}`, `RAW_WQ_${tag}`] as const;
  const subjects = [`rawpub${tag}.job`, `rawwq${tag}.job`] as const;
  const base = { storage: StorageType.File, duplicate_window: 60e9 };
  await jsm.streams.add({ ...base, name: names[0], subjects: [subjects[0]], retention: RetentionPolicy.Limits });
  await jsm.streams.add({ ...base, name: names[1], subjects: [subjects[1]], retention: RetentionPolicy.Workqueue });
  const publish = await windowed(N, IN_FLIGHT, (i) => js.publish(subjects[0], payload, { msgID: `p${i}` }));
  await jsm.consumers.add(names[1], { durable_name: 'bench', ack_policy: AckPolicy.Explicit, ack_wait: 30e9, max_ack_pending: 1000 });
  const e2e = await pipeline(
    N,
    (i) => js.publish(subjects[1], payload, { msgID: `w${i}` }),
    async (onAck) => {
      const messages = await (await js.consumers.get(names[1], 'bench')).consume({ max_messages: 1000 });
      const loop = (async () => {
        for await (const m of messages) {
          m.ack();
          onAck();
        }
      })();
      return async () => {
        await messages.close();
        await loop;
      };
    },
  );
  return { publish, e2e };
}

const best = (a: Figures, b: Figures): Figures => ({ publish: Math.max(a.publish, b.publish), e2e: Math.max(a.e2e, b.e2e) });
const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US').padStart(9)} msg/s`;
const pct = (a: number, b: number) => `${Math.round((100 * a) / b)}%`.padStart(5);

console.log(`bus bench: ${N} messages of ${payload.length} B, ${IN_FLIGHT} publishes in flight, NATS at ${NATS_URL}\n`);
// Configured as the adapter connects (no async traces), so the ratio compares code, not settings.
const nc = await connect({ servers: NATS_URL, name: 'tock-bench-raw', noAsyncTraces: true });
const natsBus = await connectNatsBus(NATS_URL, { name: 'tock-bench-adapter' });
let raw: Figures = { publish: 0, e2e: 0 };
let adapter: Figures = { publish: 0, e2e: 0 };
const created: string[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const tag = `${runId}${round}`;
    created.push(`RAW_PUB_${tag}`, `RAW_WQ_${tag}`, `NB_PUB_${tag}`, `NB_WQ_${tag}`);
    raw = best(raw, await rawFigures(nc, tag));
    adapter = best(adapter, await busFigures(natsBus, 'NB', tag));
  }
} finally {
  await natsBus.close();
  const jsm = await jetstreamManager(nc);
  for (const name of created) await jsm.streams.delete(name).catch(() => undefined);
  await nc.close();
}
console.log(`NATS JetStream, file storage (best of ${ROUNDS})`);
console.log(`${''.padEnd(26)}${'raw nats.js'.padStart(15)}    ${'natsBus'.padStart(15)}   ${'ratio'.padStart(5)}`);
console.log(`  publish+ack             ${fmt(raw.publish)}    ${fmt(adapter.publish)}   ${pct(adapter.publish, raw.publish)}`);
console.log(`  publish->consume->ack   ${fmt(raw.e2e)}    ${fmt(adapter.e2e)}   ${pct(adapter.e2e, raw.e2e)}`);

let local: Figures = { publish: 0, e2e: 0 };
for (let round = 0; round < ROUNDS; round++) {
  const inProcess = createInProcessBus();
  local = best(local, await busFigures(inProcess, 'IP', `${runId}${round}`));
  await inProcess.close();
}
console.log(`\nIn-process bus (best of ${ROUNDS})`);
console.log(`  publish                 ${fmt(local.publish)}`);
console.log(`  publish->consume->ack   ${fmt(local.e2e)}`);
