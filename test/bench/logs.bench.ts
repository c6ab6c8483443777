/**
 * Logs read model: executions recorded per second (one per transaction, and batched), the same
 * through the service's consumer on the in-process bus, and query latency on a 100k-row log; next
 * to a yardstick measured in the same run: bare better-sqlite3 INSERTs into a plain table with the
 * same file settings (WAL, synchronous=NORMAL), so the ratio shows what the view itself costs.
 *
 * Run: npx tsx test/bench/logs.bench.ts
 */
import { toBinary } from '@bufbuild/protobuf';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { ExecutionOutcome, ExecutionSchema, type Execution } from '../../shared/gen/tock/v1/events_pb.ts';
import { createLogger } from '../../shared/log.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { executionSubject } from '../../shared/subjects/executor.ts';
import type { LogsView } from '../../services/logs/logsView.ts';
import { openSqliteLogsView } from '../../services/logs/sqliteLogsView.ts';
import { startLogsService } from '../../services/logs/service.ts';
import { T0, execution } from '../unit/logs/executions.ts';

const SINGLE = 10_000;
const BATCHED = 100_000;
const BATCH = 500;
const PIPELINE = 50_000;
const JOBS = 100; // x 1000 kept per job = the 100k-row log the queries run on
const QUERY_RUNS = 300;

const OUTPUT = '{"status":"ok","queued":17,"message":"Nightly export finished in 2.4 s"}\n'.repeat(3);
/** Execution i: job i % JOBS of account 1 + job % 10, one an hour per job, every 10th a failure. */
function sample(i: number, prefix = 'r'): Execution {
  const job = i % JOBS;
  const failed = i % 10 === 3;
  return execution({
    runId: `${prefix}${i}`,
    jobId: BigInt(job + 1),
    accountId: BigInt(1 + (job % 10)),
    time: T0 + BigInt(3600 * Math.floor(i / JOBS)),
    outcome: failed ? ExecutionOutcome.FAILED : ExecutionOutcome.SUCCEEDED,
    httpStatus: failed ? 503 : 200,
    error: failed ? 'HTTP 503' : '',
    output: OUTPUT,
  });
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const rate = (n: number, s: number) => Math.round(n / s);
const fmt = (n: number) => n.toLocaleString('en-US').padStart(10);

function benchRaw(dir: string) {
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, data BLOB NOT NULL)');
  const insert = db.prepare<[number, Uint8Array]>('INSERT INTO t (job_id, data) VALUES (?, ?)');
  const insertMany = db.transaction((rows: Execution[]) => {
    for (const e of rows) insert.run(Number(e.jobId), toBinary(ExecutionSchema, e));
  });
  let start = process.hrtime.bigint();
  for (let i = 0; i < SINGLE; i++) insert.run(i % JOBS, toBinary(ExecutionSchema, sample(i)));
  const single = seconds(start);
  const batches = Array.from({ length: BATCHED / BATCH }, (_, b) => Array.from({ length: BATCH }, (_, i) => sample(SINGLE + b * BATCH + i)));
  start = process.hrtime.bigint();
  for (const batch of batches) insertMany(batch);
  const batched = seconds(start);
  db.close();
  return { single: rate(SINGLE, single), batched: rate(BATCHED, batched) };
}

async function benchView(dir: string) {
  const view = openSqliteLogsView(join(dir, 'logs.db'));
  let start = process.hrtime.bigint();
  for (let i = 0; i < SINGLE; i++) await view.record(sample(i));
  const single = seconds(start);
  const batches = Array.from({ length: BATCHED / BATCH }, (_, b) => Array.from({ length: BATCH }, (_, i) => ({ execution: sample(SINGLE + b * BATCH + i) })));
  start = process.hrtime.bigint();
  for (const batch of batches) await view.recordMany(batch);
  const batched = seconds(start);
  return { view, single: rate(SINGLE, single), batched: rate(BATCHED, batched) };
}

async function benchPipeline(dir: string) {
  const bus = createInProcessBus();
  await ensureTopology(bus);
  const messages = Array.from({ length: PIPELINE }, (_, i) => sample(i, 'p'));
  for (const e of messages) {
    const outcome = e.outcome === ExecutionOutcome.FAILED ? 'failed' : 'succeeded';
    await bus.publish(executionSubject(Number(e.accountId), Number(e.jobId), outcome), toBinary(ExecutionSchema, e), { msgId: e.runId });
  }
  const start = process.hrtime.bigint();
  // The service replays the stream into a fresh file, as a rebuild does.
  const service = await startLogsService({ bus, dbPath: join(dir, 'pipeline.db'), log: createLogger('bench', {}, 'silent'), address: '127.0.0.1:0' });
  while ((await service.view.size()).log < PIPELINE) await new Promise((r) => setTimeout(r, 5));
  const elapsed = seconds(start);
  await service.stop();
  await bus.close();
  return rate(PIPELINE, elapsed);
}

async function latency(run: () => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await run(); // warm the statement cache and the page cache
  const times: number[] = [];
  for (let i = 0; i < QUERY_RUNS; i++) {
    const start = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(2).padStart(7);
  return `p50 ${at(0.5)} ms   p99 ${at(0.99)} ms`;
}

const dir = mkdtempSync(join(tmpdir(), 'tock-logs-bench-'));
try {
  const raw = benchRaw(dir);
  const { view, single, batched } = await benchView(dir);
  const pipeline = await benchPipeline(dir);
  const size = await view.size();

  console.log('Logs read model (better-sqlite3, WAL, synchronous=NORMAL; file in a temp dir)');
  console.log(`  record, one transaction each ${fmt(single)} /s   yardstick (bare INSERT, autocommit)  ${fmt(raw.single)} /s`);
  console.log(`  recordMany, ${BATCH} per batch      ${fmt(batched)} /s   yardstick (bare INSERT, same batches) ${fmt(raw.batched)} /s`);
  console.log(`  through the service (in-process bus -> recorder -> view, ${PIPELINE.toLocaleString('en-US')} replayed) ${fmt(pipeline)} /s`);
  console.log(`\nQueries on ${size.log.toLocaleString('en-US')} log rows (${JOBS} jobs x ${view.keepPerJob}) and ${size.failures.toLocaleString('en-US')} failures, ${QUERY_RUNS} runs each`);
  const q = async (label: string, query: Parameters<LogsView['query']>[0]) => console.log(`  ${label.padEnd(46)} ${await latency(() => view.query(query))}`);
  await q('job log, page 1, limit 100', { accountId: 6n, jobId: 6n });
  await q('job log, page 5, limit 100', { accountId: 6n, jobId: 6n, page: 5 });
  await q('job log, limit 1000', { accountId: 6n, jobId: 6n, limit: 1000 });
  await q('job log, keyword in output (scans 1000)', { accountId: 6n, jobId: 6n, keyword: 'NIGHTLY' });
  await q('job log, keyword matching nothing', { accountId: 6n, jobId: 6n, keyword: 'no such text' });
  await q('account failures, all jobs, limit 100', { accountId: 4n, failuresOnly: true });
  await q('account failures, all jobs, keyword "2024-10-2"', { accountId: 4n, failuresOnly: true, keyword: '2024-10-2' });
  await q('account log, all jobs (10 jobs, 10k rows), limit 100', { accountId: 4n });
  // The health a job list shows (gateway's health.ts): newest 20 outcomes, the last result, the
  // day's counts and 24 hourly counts, for every job of account 6 (10 jobs, a run an hour each).
  const newest = Number(T0) + 3600 * Math.floor((SINGLE + BATCHED - 1) / JOBS);
  const day = { accountId: 6n, jobIds: Array.from({ length: 10 }, (_, i) => BigInt(6 + 10 * i)), recent: 20, since: newest - 86_400 + 1, hours: { from: newest - 23 * 3600, count: 24 } };
  const health = await view.summaries(day);
  if (health.some((h) => h.runsSince !== 24)) throw new Error(`expected 24 runs a job in the day, got ${health.map((h) => h.runsSince).join(',')}`);
  console.log(`  ${'health of 10 jobs (day counts, 24 hours, last 20)'.padEnd(46)} ${await latency(() => view.summaries(day))}`);
  await view.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
