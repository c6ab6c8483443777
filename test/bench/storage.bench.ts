/**
 * Storage per run, for sizing (docs/sizing.md): what a run leaves in each store, measured by
 * writing runs as Tock writes them and reading the stores' own sizes.
 *  - Event store: a successful run appends nothing; a failed one appends one FailureCounted to its
 *    job's stream (one FailuresReset at the first success after). Bytes per such event in SQLite
 *    (file size after a checkpoint) and PostgreSQL (pg_total_relation_size of the schema's tables).
 *  - JetStream EXECUTIONS (kept 7 days): one message per run; bytes per message from the stream's state.
 *  - Logs read model (SQLite): bytes per kept row (each job keeps its newest entries only).
 * Run: npx tsx test/bench/storage.bench.ts. BENCH_N overrides the 20,000 runs of each part.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toBinary } from '@bufbuild/protobuf';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import Database from 'better-sqlite3';
import pg from 'pg';
import { streamName, type EventData, type EventStore } from '../../shared/eventStore/eventStore.ts';
import { openPostgresEventStore } from '../../shared/eventStore/postgresEventStore.ts';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { openSqliteLogsView } from '../../services/logs/sqliteLogsView.ts';
import { T0, execution } from '../unit/logs/executions.ts';

const N = Number(process.env.BENCH_N ?? 20_000);
const JOBS = 1000;
const PG_URL = process.env.TOCK_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const OUTPUT = '{"status":"ok","queued":17,"message":"Nightly export finished in 2.4 s"}\n';
const perMillion = (bytes: number) => `${((bytes * 1e6) / 2 ** 20).toFixed(0)} MiB per million`;
const line = (what: string, bytes: number) => console.log(`  ${what.padEnd(58)} ${bytes.toFixed(0).padStart(5)} bytes  (${perMillion(bytes)})`);

/** Failed run i as the jobs service records it: job i % JOBS, its run id, the new failure count. */
const failure = (i: number): EventData => ({ type: 'FailureCounted', data: { fail: 1 + Math.floor(i / JOBS), runId: `${1 + (i % JOBS)}:${1_790_000_000_000 + i * 1000}`, at: 1_790_000_000_123 + i * 1000 } });

async function appendFailures(store: EventStore) {
  for (let i = 0; i < N; i += 100) {
    // In batches across jobs, as the failure consumer acks them; one append per job stream.
    for (let j = i; j < i + 100 && j < N; j++) await store.appendToStream(streamName('cronjob', 1 + (j % JOBS)), [failure(j)]);
  }
}

async function sqliteEventStore(dir: string): Promise<number> {
  const file = join(dir, 'events.db');
  let store = openSqliteEventStore(file);
  await store.appendToStream(streamName('cronjob', 0), [failure(0)]);
  await store.close();
  const before = statSync(file).size;
  store = openSqliteEventStore(file);
  await appendFailures(store);
  await store.close();
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return (statSync(file).size - before) / N;
}

async function postgresEventStore(): Promise<number | string> {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    return `skipped: no PostgreSQL (${(error as Error).message})`;
  }
  const schema = `tock_bench_${randomBytes(4).toString('hex')}`;
  const size = async () => {
    await admin.query('VACUUM');
    const { rows } = await admin.query<{ bytes: string }>(`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`, [schema]);
    return Number(rows[0]!.bytes);
  };
  try {
    const store = openPostgresEventStore(PG_URL, { schema });
    await store.appendToStream(streamName('cronjob', 0), [failure(0)]);
    const before = await size();
    await appendFailures(store);
    await store.close();
    return ((await size()) - before) / N;
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

const run = (i: number, failed: boolean) =>
  execution({
    runId: `${1 + (i % JOBS)}:${(T0 + BigInt(i)) * 1000n}`,
    jobId: BigInt(1 + (i % JOBS)),
    accountId: BigInt(1 + (i % 50)),
    time: T0 + BigInt(i),
    outcome: failed ? ExecutionOutcome.FAILED : ExecutionOutcome.SUCCEEDED,
    httpStatus: failed ? 503 : 200,
    error: failed ? 'HTTP 503' : '',
    output: OUTPUT,
    url: `https://hooks.example.com/cron/${1 + (i % JOBS)}?token=abcdef0123456789`,
  });

async function executionsStream(): Promise<number | string> {
  const nc = await connect({ servers: NATS_URL, timeout: 3000 }).catch((e: Error) => e);
  if (nc instanceof Error) return `skipped: no NATS at ${NATS_URL} (${nc.message})`;
  const jsm = await jetstreamManager(nc);
  const name = `BENCH_EXEC_${randomBytes(3).toString('hex')}`;
  const subject = `bench.${name}.executions`;
  await jsm.streams.add({ name, subjects: [`${subject}.>`] });
  try {
    const js = jsm.jetstream();
    for (let i = 0; i < N; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, N - i) }, (_, k) => {
          const e = run(i + k, (i + k) % 10 === 3);
          // The subject and the message id as the executor publishes them.
          return js.publish(`${subject}.${e.accountId}.${e.jobId}.${e.outcome === ExecutionOutcome.FAILED ? 'failed' : 'succeeded'}`, toBinary(ExecutionSchema, e), { msgID: e.runId });
        }),
      );
    }
    const info = await jsm.streams.info(name);
    return info.state.bytes / info.state.messages;
  } finally {
    await jsm.streams.delete(name);
    await nc.close();
  }
}

async function logsView(dir: string): Promise<number> {
  const file = join(dir, 'logs.db');
  const view = openSqliteLogsView(file);
  for (let i = 0; i < N; i += 500) await view.recordMany(Array.from({ length: Math.min(500, N - i) }, (_, k) => ({ execution: run(i + k, (i + k) % 10 === 3) })));
  const rows = (await view.size()).log;
  await view.close();
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return statSync(file).size / rows;
}

const dir = mkdtempSync(join(tmpdir(), 'tock-bench-storage-'));
try {
  console.log(`Storage per run (${N.toLocaleString('en-US')} runs of ${JOBS} jobs; output ${OUTPUT.length} bytes, every 10th run failed)`);
  line('event store, SQLite: per failed run (FailureCounted)', await sqliteEventStore(dir));
  const pgBytes = await postgresEventStore();
  if (typeof pgBytes === 'number') line('event store, PostgreSQL: per failed run (FailureCounted)', pgBytes);
  else console.log(`  event store, PostgreSQL: ${pgBytes}`);
  const js = await executionsStream();
  if (typeof js === 'number') line('JetStream EXECUTIONS (file storage): per run', js);
  else console.log(`  JetStream EXECUTIONS: ${js}`);
  line('logs read model, SQLite: per kept entry', await logsView(dir));
  console.log('  (a successful run appends nothing to the event store)');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
