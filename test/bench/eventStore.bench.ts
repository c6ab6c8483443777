/**
 * SQLite event store throughput, next to a yardstick: bare better-sqlite3 INSERTs with the same
 * file settings (WAL, synchronous=NORMAL), so the ratio shows what the adapter itself costs.
 *
 * Run: npx tsx test/bench/eventStore.bench.ts
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventData } from '../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';

const SINGLE = 10_000;
const BATCHES = 300;
const BATCH = 100;
const STREAMS = 100;

const payload = (i: number) => ({ jobId: `job-${i % STREAMS}`, scheduledAt: 1_700_000_000_000 + i, attempt: 1, url: 'https://example.com/hook' });
const event = (i: number): EventData => ({ type: 'RunScheduled', data: payload(i) });

async function timed(run: () => Promise<void> | void): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const rate = (count: number, seconds: number) => Math.round(count / seconds);
const fmt = (n: number) => n.toLocaleString('en-US').padStart(10);

async function benchStore(dir: string) {
  const store = openSqliteEventStore(join(dir, 'events.db'));
  const revisions = new Array<number>(STREAMS).fill(-1);

  const single = await timed(async () => {
    for (let i = 0; i < SINGLE; i++) {
      const s = i % STREAMS;
      const revision = revisions[s]!; // s < STREAMS, the array's length
      const expected = revision < 0 ? 'no_stream' : revision;
      revisions[s] = (await store.appendToStream(`run-${s}`, [event(i)], { expectedRevision: expected })).nextRevision;
    }
  });
  const batched = await timed(async () => {
    for (let b = 0; b < BATCHES; b++) {
      const s = b % STREAMS;
      const events = Array.from({ length: BATCH }, (_, i) => event(b * BATCH + i));
      revisions[s] = (await store.appendToStream(`run-${s}`, events, { expectedRevision: revisions[s] })).nextRevision;
    }
  });

  const total = SINGLE + BATCHES * BATCH;
  let delivered = 0;
  const catchUp = await timed(async () => {
    const subscription = store.subscribe({}, () => void delivered++);
    await subscription.caughtUp;
    await subscription.close();
  });
  if (delivered !== total) throw new Error(`catch-up delivered ${delivered} of ${total} events`);
  await store.close();
  return { single: rate(SINGLE, single), batched: rate(BATCHES * BATCH, batched), catchUp: rate(total, catchUp), total };
}

function benchRaw(dir: string) {
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, stream TEXT NOT NULL, data TEXT NOT NULL)');
  const insert = db.prepare<[string, string]>('INSERT INTO t (stream, data) VALUES (?, ?)');
  const insertBatch = db.transaction((rows: [string, string][]) => {
    for (const row of rows) insert.run(...row);
  });

  const start1 = process.hrtime.bigint();
  for (let i = 0; i < SINGLE; i++) insert.run(`run-${i % STREAMS}`, JSON.stringify(payload(i)));
  const single = Number(process.hrtime.bigint() - start1) / 1e9;

  const start2 = process.hrtime.bigint();
  for (let b = 0; b < BATCHES; b++) {
    insertBatch(Array.from({ length: BATCH }, (_, i): [string, string] => [`run-${b % STREAMS}`, JSON.stringify(payload(b * BATCH + i))]));
  }
  const batched = Number(process.hrtime.bigint() - start2) / 1e9;
  db.close();
  return { single: rate(SINGLE, single), batched: rate(BATCHES * BATCH, batched) };
}

const dir = mkdtempSync(join(tmpdir(), 'tock-bench-'));
try {
  const store = await benchStore(dir);
  const raw = benchRaw(dir);
  const ratio = (a: number, b: number) => `${((a / b) * 100).toFixed(0)}% of raw`;
  console.log(`SQLite event store (temp file, WAL, synchronous=NORMAL), ${STREAMS} streams`);
  console.log(`  append one by one       ${fmt(store.single)} events/s   (${ratio(store.single, raw.single)})`);
  console.log(`  append in batches of ${BATCH} ${fmt(store.batched)} events/s   (${ratio(store.batched, raw.batched)})`);
  console.log(`  subscribe catch-up      ${fmt(store.catchUp)} events/s   (${store.total.toLocaleString('en-US')} events)`);
  console.log('Yardstick: bare better-sqlite3 INSERT into a plain table, same settings');
  console.log(`  insert one by one       ${fmt(raw.single)} rows/s`);
  console.log(`  insert in batches of ${BATCH} ${fmt(raw.batched)} rows/s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
