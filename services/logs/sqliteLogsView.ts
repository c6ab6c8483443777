import { fromBinary, toBinary } from '@bufbuild/protobuf';
import Database from 'better-sqlite3';
import { AppError } from '../../shared/errors.ts';
import { single } from '../../shared/single.ts';
import { migrateSqlite, privateDbFile, useWal } from '../../shared/sqlite.ts';
import type { MigrationResult, SchemaPlan } from '../../shared/schemaVersions.ts';
import { ExecutionOutcome, ExecutionSchema, type Execution } from '../../shared/gen/tock/v1/events_pb.ts';
import { keepSetting, MAX_ID_KEY, queryInt, summaryHours, SUMMARY_RECENT_MAX, type JobSummary, type LogsEntry, type LogsQuery, type LogsView, type LogsViewOptions, type RecordInput, type SummariesQuery } from './logsView.ts';
import { invalidExecution, normalizeKeyword, limitOffset, searchText } from './search.ts';

type Table = 'log' | 'failures';
const TABLES: Table[] = ['log', 'failures'];

// Both tables have one shape: the columns a query filters or sorts on, the search text, and the
// whole Execution as protobuf bytes, so every field (and any a newer producer adds) reads back as sent.
const tableSql = (t: Table) => `
  CREATE TABLE IF NOT EXISTS ${t} (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    account_id INTEGER NOT NULL,
    job_id INTEGER NOT NULL,
    outcome INTEGER NOT NULL,
    time INTEGER NOT NULL,
    haystack TEXT NOT NULL,
    data BLOB NOT NULL
  );
  -- Serves a job's page (newest first) and its pruning (oldest first) alike.
  CREATE INDEX IF NOT EXISTS ${t}_job ON ${t} (job_id, time, id);
  CREATE INDEX IF NOT EXISTS ${t}_account ON ${t} (account_id, time, id);`;

// Migration 1 is the schema as the code before schema versions created it: repeatable, so it runs
// over such a file's tables without changing them. Later migrations are appended, never edited.
export const SQLITE_LOGS_SCHEMA: SchemaPlan<string> = {
  component: 'logs',
  what: 'logs read model (sqlite)',
  markerTable: 'log',
  migrations: [
    {
      version: 1,
      name: 'log, failures and meta',
      sql: `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;${TABLES.map(tableSql).join('')}`,
    },
    {
      version: 2,
      name: 'log_job covers the summaries',
      sql: 'DROP INDEX log_job; CREATE INDEX log_job ON log (job_id, time, id, account_id, outcome);',
    },
  ],
};

/** Brings the file at `path` (created if needed) to this code's schema version and closes it: for `tock migrate`. Opening the view does the same. */
export function migrateSqliteLogsView(path: string): MigrationResult {
  privateDbFile(path);
  const db = new Database(path, { timeout: 5000 });
  try {
    return migrateSqlite(db, SQLITE_LOGS_SCHEMA);
  } finally {
    db.close();
  }
}

/**
 * The logs read model in SQLite: one file per process (deleting it and replaying the stream
 * rebuilds it). Each insert prunes at most the one row it pushed out: an index seek, not a scan.
 * Calls run synchronously and answer settled promises, as the port asks.
 */
export function openSqliteLogsView(path: string, options: LogsViewOptions = {}): LogsView {
  const view = new SqliteLogsView(path, options);
  const run = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    keepPerJob: view.keepPerJob,
    keepFailuresPerJob: view.keepFailuresPerJob,
    record: (execution, o) => run(() => view.record(execution, o)),
    recordMany: (batch) => run(() => view.recordMany(batch)),
    query: (q) => run(() => view.query(q)),
    summaries: (q) => run(() => view.summaries(q)),
    size: () => run(() => view.size()),
    getMeta: (key) => run(() => view.getMeta(key)),
    setMeta: (key, value) => run(() => view.setMeta(key, value)),
    claimMeta: (key, value) => run(() => view.claimMeta(key, value)),
    close: () => run(() => view.close()),
  };
}

class SqliteLogsView {
  readonly keepPerJob: number;
  readonly keepFailuresPerJob: number;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** Rows per job and table, read from SQLite the first time a job is written to. */
  private readonly counts: Record<Table, Map<bigint, number>> = { log: new Map(), failures: new Map() };
  private maxId: number;
  private readonly recordBatch: (batch: RecordInput[]) => boolean[];

  constructor(path: string, options: LogsViewOptions = {}) {
    this.keepPerJob = keep(options.keepPerJob, 'keepPerJob');
    this.keepFailuresPerJob = keep(options.keepFailuresPerJob, 'keepFailuresPerJob');
    privateDbFile(path);
    this.db = new Database(path, { timeout: 5000 });
    if (path !== ':memory:') useWal(this.db, 5000);
    // WAL with NORMAL loses at most the last commits on power loss; they are unacked, so redelivered.
    this.db.pragma('synchronous = NORMAL');
    try {
      migrateSqlite(this.db, SQLITE_LOGS_SCHEMA);
    } catch (error) {
      this.db.close();
      throw error;
    }
    // The highest id ever given, not only the highest kept: an entry pruned at once (an old result
    // arriving late) must not hand its id to the next one, even after a restart.
    const given = Number(this.getMeta(MAX_ID_KEY) ?? 0);
    this.maxId = Math.max(given, ...TABLES.map((t) => (this.db.prepare(`SELECT max(id) AS m FROM ${t}`).get() as { m: number | null }).m ?? 0));
    this.applyRetentionSettings();
    const inTransaction = this.db.transaction((batch: RecordInput[]) => {
      const before = this.maxId;
      const fresh = batch.map((item) => this.insert(item));
      if (this.maxId !== before) this.setMeta(MAX_ID_KEY, String(this.maxId));
      return fresh;
    });
    this.recordBatch = (batch) => {
      try {
        return inTransaction(batch);
      } catch (error) {
        // Rolled back: the cached counts may include rows that are not there.
        this.counts.log.clear();
        this.counts.failures.clear();
        throw error;
      }
    };
  }

  record(execution: Execution, options: { id?: number } = {}): boolean {
    return single(this.recordBatch([{ execution, id: options.id }]), 'logs view record');
  }

  recordMany(batch: RecordInput[]): boolean[] {
    return batch.length === 0 ? [] : this.recordBatch(batch);
  }

  query(q: LogsQuery): LogsEntry[] {
    const table: Table = q.failuresOnly ? 'failures' : 'log';
    const jobId = queryInt(q.jobId);
    const keyword = normalizeKeyword(q.keyword);
    const { limit, offset } = limitOffset(q.page, q.limit);
    const where = ['account_id = @account'];
    if (jobId !== 0n) where.push('job_id = @job');
    if (keyword) where.push('instr(haystack, @keyword) > 0');
    // Without statistics SQLite picks the account index for a job's page and reads every row of
    // the account; the job index holds at most `keep` rows and already has them in order.
    const index = jobId !== 0n ? `${table}_job` : `${table}_account`;
    const sql = `SELECT id, data FROM ${table} INDEXED BY ${index} WHERE ${where.join(' AND ')} ORDER BY time DESC, id DESC LIMIT @limit OFFSET @offset`;
    const params: Record<string, unknown> = { account: queryInt(q.accountId), limit, offset };
    if (jobId !== 0n) params.job = jobId;
    if (keyword) params.keyword = keyword;
    const rows = this.statement(sql).all(params) as { id: number; data: Uint8Array }[];
    return rows.map((r) => ({ id: r.id, execution: fromBinary(ExecutionSchema, r.data) }));
  }

  /**
   * Three short reads per job, all from the covering index log_job but the last run's bytes: its
   * newest outcomes, its last run, and one number per run of the counted window, (seconds into
   * the window) * 2 + (1 when failed), from which the day's and each hour's counts are made here.
   * Counting per hour in SQL took a temporary b-tree per job (GROUP BY of a computed hour): a job
   * with 24 results in the day cost 82 µs in here, 24 µs now; one with 300, 250 µs and 73 µs.
   */
  summaries(q: SummariesQuery): JobSummary[] {
    const account = queryInt(q.accountId);
    const recent = Math.max(1, Math.min(SUMMARY_RECENT_MAX, Math.trunc(q.recent) || 1));
    const outcomes = this.statement('SELECT outcome FROM log INDEXED BY log_job WHERE job_id = ? AND account_id = ? ORDER BY time DESC, id DESC LIMIT ?').pluck();
    const last = this.statement('SELECT id, data FROM log INDEXED BY log_job WHERE job_id = ? AND account_id = ? ORDER BY time DESC, id DESC LIMIT 1');
    const window = this.statement('SELECT (time - @from) * 2 + (outcome = @failed) FROM log INDEXED BY log_job WHERE job_id = @job AND account_id = @account AND time >= @from').pluck();
    // Runs are after 1970: a window from before it reads the same rows, and keeps the numbers exact.
    const since = Math.max(0, Math.trunc(q.since) || 0);
    const hours = summaryHours(q.hours);
    const from = hours.count ? Math.max(0, Math.min(since, hours.from)) : since;
    return q.jobIds.map((id) => {
      const job = queryInt(id);
      const recentOutcomes = outcomes.all(job, account, recent) as ExecutionOutcome[];
      const first = recentOutcomes.length ? (last.get(job, account) as { id: number; data: Uint8Array }) : undefined;
      const runsByHour = new Array<number>(hours.count).fill(0);
      const failuresByHour = new Array<number>(hours.count).fill(0);
      let runsSince = 0;
      let failuresSince = 0;
      for (const v of window.all({ job, account, from, failed: ExecutionOutcome.FAILED }) as number[]) {
        const time = from + Math.floor(v / 2);
        const failed = v % 2;
        if (time >= since) {
          runsSince++;
          failuresSince += failed;
        }
        const h = Math.floor((time - hours.from) / 3600);
        if (time >= hours.from && h < hours.count) {
          runsByHour[h]!++;
          failuresByHour[h]! += failed;
        }
      }
      return {
        jobId: job,
        last: first && { id: first.id, execution: fromBinary(ExecutionSchema, first.data) },
        recent: recentOutcomes,
        runsSince,
        failuresSince,
        runsByHour,
        failuresByHour,
      };
    });
  }

  size(): { log: number; failures: number } {
    const n = (t: Table) => (this.statement(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    return { log: n('log'), failures: n('failures') };
  }

  getMeta(key: string): string | undefined {
    return (this.statement('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string) {
    this.statement('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  claimMeta(key: string, value: string): string {
    this.statement('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING').run(key, value);
    return this.getMeta(key)!;
  }

  close() {
    if (this.db.open) this.db.close();
  }

  private insert({ execution: e, id: wanted, data }: RecordInput): boolean {
    const invalid = invalidExecution(e);
    if (invalid) throw new AppError('INVALID_PARAMETER', `execution ${JSON.stringify(e.runId.slice(0, 80))}: ${invalid}`);
    if (this.statement('SELECT 1 FROM log WHERE run_id = @r UNION ALL SELECT 1 FROM failures WHERE run_id = @r LIMIT 1').get({ r: e.runId })) {
      return false;
    }
    const row = {
      id: this.allocateId(wanted),
      run_id: e.runId,
      account_id: e.accountId,
      job_id: e.jobId,
      outcome: e.outcome,
      time: e.time,
      haystack: searchText(e),
      data: data ?? toBinary(ExecutionSchema, e),
    };
    this.insertInto('log', row, this.keepPerJob);
    if (e.outcome === ExecutionOutcome.FAILED) this.insertInto('failures', row, this.keepFailuresPerJob);
    return true;
  }

  /** The wanted id (stream sequence) unless some row, in either table, has it; else a fresh one. */
  private allocateId(wanted?: number): number {
    const free =
      wanted !== undefined &&
      Number.isSafeInteger(wanted) &&
      wanted > 0 &&
      // Every id in use is at most maxId (it starts at the tables' largest): a newer sequence, the
      // usual case, needs no look-up.
      (wanted > this.maxId || !this.statement('SELECT 1 FROM log WHERE id = @id UNION ALL SELECT 1 FROM failures WHERE id = @id LIMIT 1').get({ id: wanted }));
    // A taken sequence means the stream was recreated under this read model: keep ids unique anyway.
    const id = free ? wanted : this.maxId + 1;
    this.maxId = Math.max(this.maxId, id);
    return id;
  }

  private insertInto(table: Table, row: Record<string, unknown>, keep: number) {
    this.statement(
      `INSERT INTO ${table} (id, run_id, account_id, job_id, outcome, time, haystack, data)
       VALUES (@id, @run_id, @account_id, @job_id, @outcome, @time, @haystack, @data)`,
    ).run(row);
    const job = row.job_id as bigint;
    const cached = this.counts[table].get(job);
    // The first write to a job counts its rows (the new one included); later ones just add one.
    let count = cached === undefined ? (this.statement(`SELECT count(*) AS n FROM ${table} WHERE job_id = ?`).get(job) as { n: number }).n : cached + 1;
    const pruneOldest = this.statement(`DELETE FROM ${table} WHERE id = (SELECT id FROM ${table} WHERE job_id = ? ORDER BY time, id LIMIT 1)`);
    for (; count > keep; count--) pruneOldest.run(job);
    this.counts[table].set(job, count);
  }

  /** Applies a lowered keep setting to every job at once, so no job shows more than the setting allows. */
  private applyRetentionSettings() {
    const settings = `${this.keepPerJob}/${this.keepFailuresPerJob}`;
    if (this.getMeta('retention') === settings) return;
    this.db.transaction(() => {
      for (const [table, keep] of [['log', this.keepPerJob], ['failures', this.keepFailuresPerJob]] as const) {
        this.db
          .prepare(
            `DELETE FROM ${table} WHERE id IN (SELECT id FROM (
               SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY time DESC, id DESC) AS n FROM ${table}
             ) WHERE n > ?)`,
          )
          .run(keep);
      }
      this.setMeta('retention', settings);
    })();
  }

  private statement(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }
}

function keep(value: number | undefined, name: string): number {
  try {
    return keepSetting(value, 1000, name);
  } catch (error) {
    throw new AppError('INVALID_PARAMETER', (error as Error).message);
  }
}
