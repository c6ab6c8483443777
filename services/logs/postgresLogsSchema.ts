/**
 * The PostgreSQL logs read model's tables, as an ordered list of migrations
 * (shared/schemaVersions.ts), recorded in the schema's `tock_schema_version` under the component
 * `logs`. Migration 1 is the tables exactly as the code before schema versions created them,
 * repeatable (IF NOT EXISTS) so that it can run over tables that code made. A later migration is
 * appended to the list and never edited once released. The record_batch function is this code's,
 * declared again on every run (the code before versions did the same at every start).
 */
import type pg from 'pg';
import { createPool, migratePostgres, postgresTarget, translatePgError, type PostgresPlan, type PostgresTarget } from '../../shared/postgres.ts';
import type { MigrationResult } from '../../shared/schemaVersions.ts';
import { MAX_ID_KEY } from './logsView.ts';

/** The advisory lock of the schema's migrations, and of record_batch: batches of all replicas take turns on it. */
export const logsLockKey = (target: PostgresTarget) => `tock logs ${target.schemaName}`;

const tableSql = (s: string, t: string) => `
  CREATE TABLE IF NOT EXISTS ${s}.${t} (
    id bigint PRIMARY KEY,
    run_id text NOT NULL UNIQUE,
    account_id bigint NOT NULL,
    job_id bigint NOT NULL,
    outcome integer NOT NULL,
    time bigint NOT NULL,
    haystack text NOT NULL,
    data bytea NOT NULL
  );
  CREATE INDEX IF NOT EXISTS ${t}_job ON ${s}.${t} (job_id, time, id);
  CREATE INDEX IF NOT EXISTS ${t}_account ON ${s}.${t} (account_id, time, id);`;

/** Inserts into one table and prunes the job to its newest `keep` rows. */
const insertSql = (s: string, t: string, keep: string) => `
      INSERT INTO ${s}.${t} (id, run_id, account_id, job_id, outcome, time, haystack, data)
        VALUES (v_id, p_run_ids[i], p_accounts[i], p_jobs[i], p_outcomes[i], p_times[i], p_haystacks[i], p_data[i]);
      DELETE FROM ${s}.${t} d WHERE d.job_id = p_jobs[i] AND (d.time, d.id) <= (
        SELECT k.time, k.id FROM ${s}.${t} k WHERE k.job_id = p_jobs[i] ORDER BY k.time DESC, k.id DESC OFFSET ${keep} LIMIT 1);`;

const initialTables = (s: string) => `
  CREATE SCHEMA IF NOT EXISTS ${s};
  CREATE TABLE IF NOT EXISTS ${s}.meta (key text PRIMARY KEY, value text NOT NULL);
  ${tableSql(s, 'log')}
  ${tableSql(s, 'failures')}
`;

const recordBatchFunction = (s: string, lockKey: string) => `
  CREATE OR REPLACE FUNCTION ${s}.record_batch(
    p_ids bigint[], p_run_ids text[], p_accounts bigint[], p_jobs bigint[], p_outcomes integer[],
    p_times bigint[], p_haystacks text[], p_data bytea[], p_keep integer, p_keep_failures integer, p_failed integer)
  RETURNS boolean[] LANGUAGE plpgsql AS $fn$
  DECLARE
    v_fresh boolean[] := '{}';
    v_max   bigint;
    v_id    bigint;
  BEGIN
    -- Held until commit: batches of all replicas take turns.
    PERFORM pg_advisory_xact_lock(hashtext('${lockKey}'));
    -- The highest id ever given, not only the highest kept: an entry pruned at once (an old result
    -- arriving late) must not hand its id to the next one.
    SELECT greatest(coalesce((SELECT max(id) FROM ${s}.log), 0), coalesce((SELECT max(id) FROM ${s}.failures), 0),
                    coalesce((SELECT value::bigint FROM ${s}.meta WHERE key = '${MAX_ID_KEY}'), 0)) INTO v_max;
    FOR i IN 1 .. coalesce(array_length(p_run_ids, 1), 0) LOOP
      IF EXISTS (SELECT 1 FROM ${s}.log WHERE run_id = p_run_ids[i]) OR EXISTS (SELECT 1 FROM ${s}.failures WHERE run_id = p_run_ids[i]) THEN
        v_fresh := v_fresh || false;
        CONTINUE;
      END IF;
      v_id := p_ids[i];
      -- A taken sequence means the stream was recreated under this read model: keep ids unique anyway.
      IF v_id IS NULL OR EXISTS (SELECT 1 FROM ${s}.log WHERE id = v_id) OR EXISTS (SELECT 1 FROM ${s}.failures WHERE id = v_id) THEN
        v_id := v_max + 1;
      END IF;
      v_max := greatest(v_max, v_id);
      ${insertSql(s, 'log', 'p_keep')}
      IF p_outcomes[i] = p_failed THEN
        ${insertSql(s, 'failures', 'p_keep_failures')}
      END IF;
      v_fresh := v_fresh || true;
    END LOOP;
    INSERT INTO ${s}.meta (key, value) VALUES ('${MAX_ID_KEY}', v_max::text) ON CONFLICT (key) DO UPDATE SET value = excluded.value;
    RETURN v_fresh;
  END $fn$;
`;

export const LOGS_SCHEMA: PostgresPlan = {
  component: 'logs',
  what: 'logs read model (postgres)',
  markerTable: 'log',
  migrations: [{ version: 1, name: 'log, failures and meta', sql: (t) => initialTables(t.schema) }],
  definitions: (t) => recordBatchFunction(t.schema, logsLockKey(t)),
};

/** Migrates the logs tables on the pool's database (what the view does before its first call). */
export const migrateLogsTables = (pool: pg.Pool, target: PostgresTarget) => migratePostgres(pool, target, logsLockKey(target), LOGS_SCHEMA);

/** Brings the logs read model at `url` (its `schema` parameter, default `tock_logs`) to this code's schema version over a connection of its own. */
export async function migratePostgresLogsView(url: string, options: { schema?: string } = {}): Promise<MigrationResult> {
  const target = postgresTarget(url, 'tock_logs', options.schema);
  const pool = createPool(target, { max: 1 });
  try {
    return await migrateLogsTables(pool, target);
  } catch (error) {
    throw translatePgError(error, 'logs view');
  } finally {
    await pool.end();
  }
}
