// Registration measured from outside (issue 23's row): N jobs through cron_batch_add, 1000 a call,
// into Tock started as `npm start` starts it, /healthz polled all along on the API port; and the
// raw limit on this machine in the same run: the same number of rows inserted into a bare SQLite
// table shaped like the event store's, 1000 a transaction, as durable (WAL, synchronous NORMAL).
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { treeUsage } from './procTree.ts';
import { startTock } from './tock.ts';

const PER_CALL = 1000;

/**
 * The jobs: each different, none due while the bench runs (once a year, on the 1st of January), so
 * what is measured is registering them, not running them.
 */
export const registrationBatch = (from: number, count: number) =>
  Array.from({ length: count }, (_, k) => ({ url: `http://127.0.0.1:9/reg/${from + k}`, expression: `${(from + k) % 60} ${(from + k) % 24} 1 1 *`, name: `reg ${from + k}` }));

/** Polls `url` every 10 ms while `work` runs: the slowest answer, and the largest time between two answers. */
export async function healthGaps<T>(url: string, work: () => Promise<T>): Promise<{ result: T; slowestMs: number; gapMs: number; polls: number }> {
  let done = false;
  let slowestMs = 0;
  let gapMs = 0;
  let polls = 0;
  const poller = (async () => {
    let last = performance.now();
    while (!done) {
      const sent = performance.now();
      const r = await fetch(url);
      await r.arrayBuffer();
      const now = performance.now();
      if (r.ok) (polls++, (slowestMs = Math.max(slowestMs, now - sent)), (gapMs = Math.max(gapMs, now - last)), (last = now));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    return { result: await work(), slowestMs, gapMs, polls };
  } finally {
    done = true;
    await poller;
  }
}

export interface Registered {
  n: number;
  seconds: number;
  idle: { slowestMs: number; gapMs: number };
  slowestMs: number;
  gapMs: number;
  cpuMsPerThousand: number;
  rssIdleMb: number;
  /** 15 s after the last call: the young generation and the old one still sized for the burst. */
  rssHeldMb: number;
  /** `SETTLE_S` after the last call, at rest: V8's memory reducer has run (it waits for a quiet spell). */
  rssSettledMb: number;
}

/** How long after the last call the held RSS is read: the planner and the projections have taken the jobs in. */
export const HELD_S = 15;
/** How long after the last call the settled RSS is read. V8 shrinks its heap after a minute or so of low allocation. */
export const SETTLE_S = 150;

/** Starts a fresh Tock, registers `n` jobs, reads its process tree's RSS once it has taken them in, stops it. */
export async function registerInTock(n: number): Promise<Registered> {
  const tock = await startTock();
  try {
    const health = `${tock.api}/healthz`;
    // Compiling the code paths happens once per process, not per job: one small batch first.
    const warm = (await tock.call('cron_batch_add', { data: registrationBatch(10_000_000, 4) })) as { data: { id: number }[] };
    await tock.call('cron_batch_delete', { id: warm.data.map((j) => j.id) });
    const idle = await healthGaps(health, () => new Promise((r) => setTimeout(r, 2000)));
    const rssIdle = treeUsage(tock.pid).rss;
    const cpu0 = treeUsage(tock.pid).cpuUs;
    const t0 = performance.now();
    const run = await healthGaps(health, async () => {
      for (let from = 0; from < n; from += PER_CALL) await tock.call('cron_batch_add', { data: registrationBatch(from, Math.min(PER_CALL, n - from)) });
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpuUs = treeUsage(tock.pid).cpuUs - cpu0;
    // The planner and the projections take the jobs in after the last answer; then the heap settles.
    await new Promise((r) => setTimeout(r, HELD_S * 1000));
    const rssHeld = treeUsage(tock.pid).rss;
    await new Promise((r) => setTimeout(r, (SETTLE_S - HELD_S) * 1000));
    const rssSettled = treeUsage(tock.pid).rss;
    const mb = (bytes: number) => bytes / 2 ** 20;
    return { n, seconds, idle, slowestMs: run.slowestMs, gapMs: run.gapMs, cpuMsPerThousand: cpuUs / n, rssIdleMb: mb(rssIdle), rssHeldMb: mb(rssHeld), rssSettledMb: mb(rssSettled) };
  } finally {
    await tock.stop();
  }
}

/** The raw limit: `n` rows of the same elements into a bare events table, 1000 a transaction. Seconds. */
export function rawSqliteInserts(n: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'tock-raw-'));
  const db = new Database(join(dir, 'raw.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, stream TEXT NOT NULL, revision INTEGER NOT NULL,
               category TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, time INTEGER NOT NULL);
             CREATE UNIQUE INDEX events_by_stream ON events (stream, revision);
             CREATE INDEX events_by_category ON events (category, position);`);
    const insert = db.prepare('INSERT INTO events (id, stream, revision, category, type, data, metadata, time) VALUES (?, ?, 0, ?, ?, ?, ?, ?)');
    const batch = db.transaction((from: number, data: ReturnType<typeof registrationBatch>) => {
      for (const [k, element] of data.entries()) insert.run(randomUUID(), `cronjob-${from + k}`, 'cronjob', 'JobCreated', JSON.stringify(element), '{}', Date.now());
    });
    const t0 = performance.now();
    for (let from = 0; from < n; from += PER_CALL) batch(from, registrationBatch(from, Math.min(PER_CALL, n - from)));
    return (performance.now() - t0) / 1000;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
