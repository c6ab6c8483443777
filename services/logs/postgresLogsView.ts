/**
 * The logs read model in PostgreSQL: one database shared by any number of logs replicas.
 *
 * Replicas write at once, so a batch runs as one call of `record_batch`, which holds an advisory
 * lock until it commits: the duplicate check (a run id held in the log or the failures), the id
 * choice (the stream sequence when free, else past the largest id) and the pruning of each job to
 * its newest results all see every other replica's committed rows, and a batch is all or nothing.
 * Rows are handled one by one, in the batch's order, exactly as the SQLite adapter does, so both
 * answer the one contract suite alike.
 */
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { AppError } from '../../shared/errors.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { single } from '../../shared/single.ts';
import { createPool, postgresTarget, translatePgError, withSchemaLock } from '../../shared/postgres.ts';
import { hourlyCounts, keepSetting, queryInt, summaryHours, SUMMARY_RECENT_MAX, type JobSummary, type LogsEntry, type LogsQuery, type LogsView, type LogsViewOptions, type RecordInput, type SummariesQuery } from './logsView.ts';
import { invalidExecution, normalizeKeyword, limitOffset, searchText } from './search.ts';
import { logsLockKey, migrateLogsTables } from './postgresLogsSchema.ts';

/** Opens the logs read model in the PostgreSQL database at `url`; tables go in its `schema` parameter's schema, default `tock_logs`. */
export function openPostgresLogsView(url: string, options: LogsViewOptions & { schema?: string; onConnectionError?: (error: unknown) => void } = {}): LogsView {
  const keep = (value: number | undefined, name: string) => {
    try {
      return keepSetting(value, 1000, name);
    } catch (error) {
      throw new AppError('INVALID_PARAMETER', (error as Error).message);
    }
  };
  const keepPerJob = keep(options.keepPerJob, 'keepPerJob');
  const keepFailuresPerJob = keep(options.keepFailuresPerJob, 'keepFailuresPerJob');
  const target = postgresTarget(url, 'tock_logs', options.schema);
  const s = target.schema;
  const pool = createPool(target, { onIdleError: options.onConnectionError });
  let closed = false;
  let schemaReady: Promise<void> | undefined;

  /** Migrates the tables (postgresLogsSchema.ts) and applies the retention settings once; a failure is tried again by the next call. */
  const ready = () =>
    (schemaReady ??= (async () => {
      await migrateLogsTables(pool, target);
      // Under the lock record_batch takes, as a batch would prune.
      await withSchemaLock(pool, logsLockKey(target), applyRetentionSettings);
    })().catch((error: unknown) => {
      schemaReady = undefined;
      throw error;
    }));

  /** Applies a lowered keep setting to every job at once, so no job shows more than the setting allows. */
  async function applyRetentionSettings(client: { query: typeof pool.query }) {
    const settings = `${keepPerJob}/${keepFailuresPerJob}`;
    const { rows } = await client.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'retention'`);
    if (rows[0]?.value === settings) return;
    for (const [table, n] of [['log', keepPerJob], ['failures', keepFailuresPerJob]] as const) {
      await client.query(
        `DELETE FROM ${s}.${table} WHERE id IN (SELECT id FROM (
           SELECT id, row_number() OVER (PARTITION BY job_id ORDER BY time DESC, id DESC) AS n FROM ${s}.${table}
         ) ranked WHERE n > $1)`,
        [n],
      );
    }
    await client.query(`INSERT INTO ${s}.meta (key, value) VALUES ('retention', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [settings]);
  }

  const query = async <R extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> => {
    if (closed) throw new AppError('INTERNAL', 'logs view (postgres) is closed');
    try {
      await ready();
      return (await pool.query<R>(sql, params)).rows;
    } catch (error) {
      throw translatePgError(error, 'logs view');
    }
  };

  const view: LogsView = {
    keepPerJob,
    keepFailuresPerJob,

    record: async (execution, o = {}) => single(await view.recordMany([{ execution, id: o.id }]), 'logs view record'),

    async recordMany(batch: RecordInput[]) {
      if (batch.length === 0) return [];
      for (const { execution: e } of batch) {
        const invalid = invalidExecution(e);
        if (invalid) throw new AppError('INVALID_PARAMETER', `execution ${JSON.stringify(e.runId.slice(0, 80))}: ${invalid}`);
      }
      const wanted = (id?: number) => (id !== undefined && Number.isSafeInteger(id) && id > 0 ? id : null);
      const row = single(await query<{ fresh: boolean[] }>(
        `SELECT ${s}.record_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS fresh`,
        [
          batch.map((b) => wanted(b.id)),
          batch.map((b) => b.execution.runId),
          batch.map((b) => String(b.execution.accountId)),
          batch.map((b) => String(b.execution.jobId)),
          batch.map((b) => b.execution.outcome),
          batch.map((b) => String(b.execution.time)),
          batch.map((b) => searchText(b.execution)),
          batch.map((b) => Buffer.from(b.data ?? toBinary(ExecutionSchema, b.execution))),
          keepPerJob,
          keepFailuresPerJob,
          ExecutionOutcome.FAILED,
        ],
      ), 'record_batch');
      return row.fresh;
    },

    async query(q: LogsQuery): Promise<LogsEntry[]> {
      const table = q.failuresOnly ? 'failures' : 'log';
      const jobId = queryInt(q.jobId);
      const keyword = normalizeKeyword(q.keyword);
      const { limit, offset } = limitOffset(q.page, q.limit);
      const params: unknown[] = [String(queryInt(q.accountId)), limit, offset];
      const where = ['account_id = $1'];
      if (jobId !== 0n) where.push(`job_id = $${params.push(String(jobId))}`);
      if (keyword) where.push(`strpos(haystack, $${params.push(keyword)}) > 0`);
      const rows = await query<{ id: string; data: Buffer }>(
        `SELECT id, data FROM ${s}.${table} WHERE ${where.join(' AND ')} ORDER BY time DESC, id DESC LIMIT $2 OFFSET $3`,
        params,
      );
      return rows.map((r) => ({ id: Number(r.id), execution: fromBinary(ExecutionSchema, r.data) }));
    },

    /** One statement for every asked job: each job's newest rows and counts through its index. */
    async summaries(q: SummariesQuery): Promise<JobSummary[]> {
      if (!q.jobIds.length) return [];
      const recent = Math.max(1, Math.min(SUMMARY_RECENT_MAX, Math.trunc(q.recent) || 1));
      const ids = q.jobIds.map((id) => String(queryInt(id)));
      const rows = await query<{ job_id: string; outcomes: number[]; last_id: string | null; last_data: Buffer | null; runs: string; failures: string }>(
        `SELECT j.job_id, n.outcomes, n.last_id, n.last_data, c.runs, c.failures
           FROM unnest($2::bigint[]) AS j(job_id)
           CROSS JOIN LATERAL (
             SELECT coalesce(array_agg(r.outcome ORDER BY r.time DESC, r.id DESC), '{}') AS outcomes,
                    (array_agg(r.id ORDER BY r.time DESC, r.id DESC))[1] AS last_id,
                    (array_agg(r.data ORDER BY r.time DESC, r.id DESC))[1] AS last_data
               FROM (SELECT id, time, outcome, data FROM ${s}.log
                      WHERE job_id = j.job_id AND account_id = $1 ORDER BY time DESC, id DESC LIMIT $3) r) n
           CROSS JOIN LATERAL (
             SELECT count(*) AS runs, count(*) FILTER (WHERE outcome = $5) AS failures
               FROM ${s}.log WHERE job_id = j.job_id AND account_id = $1 AND time >= $4) c`,
        [String(queryInt(q.accountId)), ids, recent, Math.trunc(q.since), ExecutionOutcome.FAILED],
      );
      const hours = summaryHours(q.hours);
      const hourly = hours.count
        ? await query<{ job_id: string; h: string; runs: string; failures: string }>(
            `SELECT job_id, (time - $3) / 3600 AS h, count(*) AS runs, count(*) FILTER (WHERE outcome = $5) AS failures
               FROM ${s}.log WHERE job_id = ANY($2::bigint[]) AND account_id = $1 AND time >= $3 AND time < $4
              GROUP BY job_id, h`,
            [String(queryInt(q.accountId)), ids, hours.from, hours.from + hours.count * 3600, ExecutionOutcome.FAILED],
          )
        : [];
      const hoursOf = new Map<string, { h: number; runs: number; failures: number }[]>();
      for (const row of hourly) {
        const list = hoursOf.get(row.job_id) ?? [];
        list.push({ h: Number(row.h), runs: Number(row.runs), failures: Number(row.failures) });
        hoursOf.set(row.job_id, list);
      }
      const byJob = new Map(rows.map((r) => [r.job_id, r]));
      return ids.map((id) => {
        const r = byJob.get(id);
        return {
          jobId: BigInt(id),
          last: r?.last_data ? { id: Number(r.last_id), execution: fromBinary(ExecutionSchema, r.last_data) } : undefined,
          recent: r?.outcomes ?? [],
          runsSince: Number(r?.runs ?? 0),
          failuresSince: Number(r?.failures ?? 0),
          ...hourlyCounts(hours.count, hoursOf.get(id) ?? []),
        };
      });
    },

    async size() {
      const row = single(
        await query<{ log: string; failures: string }>(`SELECT (SELECT count(*) FROM ${s}.log) AS log, (SELECT count(*) FROM ${s}.failures) AS failures`),
        'logs view size',
      );
      return { log: Number(row.log), failures: Number(row.failures) };
    },

    async getMeta(key) {
      return (await query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = $1`, [key]))[0]?.value;
    },

    async setMeta(key, value) {
      await query(`INSERT INTO ${s}.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [key, value]);
    },

    async claimMeta(key, value) {
      await query(`INSERT INTO ${s}.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [key, value]);
      return (await view.getMeta(key))!;
    },

    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
  return view;
}
