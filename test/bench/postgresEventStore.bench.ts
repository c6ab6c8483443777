/**
 * PostgreSQL event store throughput, next to a yardstick measured in the same run: bare
 * node-postgres INSERTs of the same rows into a plain table with a bigserial key (no ordering
 * lock, no revision check, no NOTIFY), and a bare paging SELECT for catch-up. The ratio shows what
 * the adapter's guarantees cost. Runs in a schema of its own, dropped at the end.
 *
 * PostgreSQL: TOCK_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 * Run: npx tsx test/bench/postgresEventStore.bench.ts
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { EventData } from '../../shared/eventStore/eventStore.ts';
import { openPostgresEventStore } from '../../shared/eventStore/postgresEventStore.ts';

const URL = process.env.TOCK_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SINGLE = 3_000;
const CONCURRENT = 8; // appenders at once, as several jobs replicas would be
const BATCHES = 100;
const BATCH = 100;
const STREAMS = 100;
const PAGE = 256;

const payload = (i: number) => ({ jobId: `job-${i % STREAMS}`, scheduledAt: 1_700_000_000_000 + i, attempt: 1, url: 'https://example.com/hook' });
const event = (i: number): EventData => ({ type: 'RunScheduled', data: payload(i) });

async function timed(run: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e9;
}
const rate = (count: number, seconds: number) => Math.round(count / seconds);
const fmt = (n: number) => n.toLocaleString('en-US').padStart(9);

async function benchStore(schema: string) {
  const store = openPostgresEventStore(URL, { schema, maxConnections: CONCURRENT + 2 });
  const revisions = new Array<number>(STREAMS).fill(-1);
  await store.readStream('warm-up');

  const single = await timed(async () => {
    for (let i = 0; i < SINGLE; i++) {
      const s = i % STREAMS;
      const revision = revisions[s]!; // s < STREAMS, the array's length
      const expected = revision < 0 ? 'no_stream' : revision;
      revisions[s] = (await store.appendToStream(`run-${s}`, [event(i)], { expectedRevision: expected })).nextRevision;
    }
  });
  // Each appender owns its streams, so every append succeeds; they still take turns on the lock.
  const concurrent = await timed(async () => {
    await Promise.all(
      Array.from({ length: CONCURRENT }, async (_, w) => {
        for (let i = 0; i < SINGLE / CONCURRENT; i++) await store.appendToStream(`par-${w}`, [event(i)]);
      }),
    );
  });
  const batched = await timed(async () => {
    for (let b = 0; b < BATCHES; b++) {
      const s = b % STREAMS;
      const events = Array.from({ length: BATCH }, (_, i) => event(b * BATCH + i));
      revisions[s] = (await store.appendToStream(`run-${s}`, events, { expectedRevision: revisions[s] })).nextRevision;
    }
  });

  const total = SINGLE * 2 + BATCHES * BATCH;
  let delivered = 0;
  const catchUp = await timed(async () => {
    const subscription = store.subscribe({}, () => void delivered++);
    await subscription.caughtUp;
    await subscription.close();
  });
  if (delivered !== total) throw new Error(`catch-up delivered ${delivered} of ${total} events`);
  await store.close();
  return { single: rate(SINGLE, single), concurrent: rate(SINGLE, concurrent), batched: rate(BATCHES * BATCH, batched), catchUp: rate(total, catchUp), total };
}

async function benchRaw(schema: string) {
  const pool = new pg.Pool({ connectionString: URL, max: CONCURRENT + 2 });
  const t = `"${schema}".raw_events`;
  await pool.query(`CREATE TABLE ${t} (position bigserial PRIMARY KEY, id text NOT NULL, stream text NOT NULL, type text NOT NULL, data jsonb NOT NULL, time bigint NOT NULL)`);
  const insert = `INSERT INTO ${t} (id, stream, type, data, time) VALUES ($1, $2, $3, $4::jsonb, $5)`;
  const single = await timed(async () => {
    for (let i = 0; i < SINGLE; i++) await pool.query(insert, [randomUUID(), `run-${i % STREAMS}`, 'RunScheduled', JSON.stringify(payload(i)), Date.now()]);
  });
  const concurrent = await timed(async () => {
    await Promise.all(
      Array.from({ length: CONCURRENT }, async (_, w) => {
        for (let i = 0; i < SINGLE / CONCURRENT; i++) await pool.query(insert, [randomUUID(), `par-${w}`, 'RunScheduled', JSON.stringify(payload(i)), Date.now()]);
      }),
    );
  });
  const batched = await timed(async () => {
    for (let b = 0; b < BATCHES; b++) {
      const rows = JSON.stringify(Array.from({ length: BATCH }, (_, i) => ({ id: randomUUID(), data: payload(b * BATCH + i) })));
      await pool.query(
        `INSERT INTO ${t} (id, stream, type, data, time) SELECT x->>'id', $1, 'RunScheduled', x->'data', $2 FROM jsonb_array_elements($3::jsonb) AS x`,
        [`run-${b % STREAMS}`, Date.now(), rows],
      );
    }
  });
  const total = SINGLE * 2 + BATCHES * BATCH;
  let read = 0;
  const catchUp = await timed(async () => {
    for (let from = '0'; ; ) {
      const { rows } = await pool.query(`SELECT * FROM ${t} WHERE position > $1 ORDER BY position LIMIT ${PAGE}`, [from]);
      read += rows.length;
      if (rows.length < PAGE) break;
      from = rows[rows.length - 1].position;
    }
  });
  if (read !== total) throw new Error(`raw catch-up read ${read} of ${total}`);
  await pool.end();
  return { single: rate(SINGLE, single), concurrent: rate(SINGLE, concurrent), batched: rate(BATCHES * BATCH, batched), catchUp: rate(total, catchUp) };
}

const admin = new pg.Client({ connectionString: URL, connectionTimeoutMillis: 3000 });
try {
  await admin.connect();
} catch (error) {
  console.log(`skipped: no PostgreSQL at ${URL.replace(/\/\/[^@/]*@/, '//')} (${(error as Error).message})`);
  process.exit(0);
}
const schema = `tock_bench_${randomBytes(4).toString('hex')}`;
try {
  const { rows } = await admin.query<{ version: string; sync: string }>(`SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sync`);
  const store = await benchStore(schema);
  await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const raw = await benchRaw(schema);
  console.log(`PostgreSQL event store (PostgreSQL ${rows[0]!.version}, synchronous_commit=${rows[0]!.sync}, node-postgres; loopback)`);
  console.log(`  append 1 event, one after another     ${fmt(store.single)} events/s   yardstick (bare INSERT, autocommit)        ${fmt(raw.single)} /s`);
  console.log(`  append 1 event, ${CONCURRENT} appenders at once    ${fmt(store.concurrent)} events/s   yardstick (bare INSERT, ${CONCURRENT} connections)     ${fmt(raw.concurrent)} /s`);
  console.log(`  append ${BATCH} events per call           ${fmt(store.batched)} events/s   yardstick (bare INSERT ... SELECT, ${BATCH} rows) ${fmt(raw.batched)} /s`);
  console.log(`  catch-up subscription (${store.total.toLocaleString('en-US')} events)  ${fmt(store.catchUp)} events/s   yardstick (bare SELECT pages of ${PAGE})        ${fmt(raw.catchUp)} /s`);
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
