/**
 * The PostgreSQL event store's tables, as an ordered list of migrations (shared/schemaVersions.ts),
 * recorded in the schema's `tock_schema_version` under the component `events`.
 *
 * Migration 1 is the tables exactly as the code before schema versions created them, repeatable
 * (IF NOT EXISTS) so that it can run over tables that code made. A later migration is appended to
 * the list and never edited once released; it may assume every earlier one ran. The append
 * function is this code's, declared again on every run (the code before versions did the same at
 * every start).
 */
import type pg from 'pg';
import { createPool, migratePostgres, postgresTarget, translatePgError, type PostgresPlan, type PostgresTarget } from '../postgres.ts';
import type { MigrationResult } from '../schemaVersions.ts';

/** The NOTIFY channel of a schema's appends: one per schema, so two installations sharing a database do not wake each other. */
export const appendChannel = (target: PostgresTarget) => `tock_events_${target.schemaName}`;

/** The advisory lock under which the tables are created and migrated (the code before versions took it too). */
export const schemaLockKey = (target: PostgresTarget) => `tock events ${target.schemaName}`;

const initialTables = (s: string) => `
  CREATE SCHEMA IF NOT EXISTS ${s};
  CREATE TABLE IF NOT EXISTS ${s}.head (
    one      boolean PRIMARY KEY DEFAULT true CHECK (one),
    position bigint NOT NULL
  );
  INSERT INTO ${s}.head (position) VALUES (0) ON CONFLICT DO NOTHING;
  CREATE TABLE IF NOT EXISTS ${s}.streams (
    name      text PRIMARY KEY,
    revision  bigint NOT NULL,
    max_count integer
  );
  CREATE TABLE IF NOT EXISTS ${s}.events (
    position bigint PRIMARY KEY,
    id       text NOT NULL,
    stream   text NOT NULL,
    revision bigint NOT NULL,
    category text NOT NULL,
    type     text NOT NULL,
    data     jsonb NOT NULL,
    metadata jsonb NOT NULL,
    time     bigint NOT NULL,
    UNIQUE (stream, revision)
  );
  CREATE INDEX IF NOT EXISTS events_by_category ON ${s}.events (category, position);
`;

const appendFunction = (s: string, channel: string) => `
  -- One call per append. Returns ok = false and the stream's revision when the expectation fails.
  CREATE OR REPLACE FUNCTION ${s}.append(p_stream text, p_category text, p_expected text, p_time bigint, p_events jsonb)
  RETURNS TABLE (ok boolean, next_revision bigint, last_position bigint)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_head    bigint;
    v_current bigint;
    v_max     integer;
    v_count   integer := jsonb_array_length(p_events);
  BEGIN
    -- Held until commit: appends take turns, so positions become visible in order.
    SELECT h.position INTO v_head FROM ${s}.head h FOR UPDATE;
    SELECT st.revision, st.max_count INTO v_current, v_max FROM ${s}.streams st WHERE st.name = p_stream;
    v_current := coalesce(v_current, -1);
    IF NOT (p_expected = 'any'
            OR (p_expected = 'no_stream' AND v_current < 0)
            OR (p_expected = 'stream_exists' AND v_current >= 0)
            OR p_expected = v_current::text) THEN
      RETURN QUERY SELECT false, v_current, 0::bigint;
      RETURN;
    END IF;
    IF v_count = 0 THEN
      RETURN QUERY SELECT true, v_current,
        coalesce((SELECT e.position FROM ${s}.events e WHERE e.stream = p_stream ORDER BY e.revision DESC LIMIT 1), 0);
      RETURN;
    END IF;
    INSERT INTO ${s}.events (position, id, stream, revision, category, type, data, metadata, time)
      SELECT v_head + x.n, x.e->>'id', p_stream, v_current + x.n, p_category, x.e->>'type', x.e->'data', x.e->'metadata', p_time
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(e, n);
    UPDATE ${s}.head SET position = v_head + v_count;
    INSERT INTO ${s}.streams (name, revision) VALUES (p_stream, v_current + v_count)
      ON CONFLICT (name) DO UPDATE SET revision = excluded.revision;
    IF v_max IS NOT NULL THEN
      DELETE FROM ${s}.events e WHERE e.stream = p_stream AND e.revision <= v_current + v_count - v_max;
    END IF;
    PERFORM pg_notify('${channel}', '');
    RETURN QUERY SELECT true, v_current + v_count, v_head + v_count;
  END $fn$;
`;

const appendManyFunction = (s: string, channel: string) => `
  -- One call per appendMany: p_appends is [{stream, category, expected, events: [...]}], each stream
  -- once. Returns one row per stream (its index from 1, next revision, last position), or a single
  -- row ok = false naming the first stream whose expectation fails (and its revision), with nothing written.
  CREATE OR REPLACE FUNCTION ${s}.append_many(p_time bigint, p_appends jsonb)
  RETURNS TABLE (ok boolean, n bigint, next_revision bigint, last_position bigint)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_head  bigint;
    v_count bigint;
  BEGIN
    -- Held until commit, as in append: while it is held no other append checks or writes, so
    -- checking every stream first and then writing them all is one atomic step.
    SELECT h.position INTO v_head FROM ${s}.head h FOR UPDATE;
    RETURN QUERY
      SELECT false, a.n, coalesce(st.revision, -1), 0::bigint
      FROM jsonb_array_elements(p_appends) WITH ORDINALITY AS a(x, n)
      LEFT JOIN ${s}.streams st ON st.name = a.x->>'stream'
      WHERE NOT (a.x->>'expected' = 'any'
                 OR (a.x->>'expected' = 'no_stream' AND st.revision IS NULL)
                 OR (a.x->>'expected' = 'stream_exists' AND st.revision >= 0)
                 OR a.x->>'expected' = coalesce(st.revision, -1)::text)
      ORDER BY a.n LIMIT 1;
    IF FOUND THEN
      RETURN;
    END IF;
    -- Positions follow the order of the streams, then of each stream's events.
    WITH a AS (
      SELECT x.n, x.x->>'stream' AS stream, x.x->>'category' AS category, x.x->'events' AS events, coalesce(st.revision, -1) AS current
      FROM jsonb_array_elements(p_appends) WITH ORDINALITY AS x(x, n)
      LEFT JOIN ${s}.streams st ON st.name = x.x->>'stream'
    ), inserted AS (
      INSERT INTO ${s}.events (position, id, stream, revision, category, type, data, metadata, time)
        SELECT v_head + row_number() OVER (ORDER BY a.n, e.k), e.e->>'id', a.stream, a.current + e.k, a.category, e.e->>'type', e.e->'data', e.e->'metadata', p_time
        FROM a, jsonb_array_elements(a.events) WITH ORDINALITY AS e(e, k)
        RETURNING 1
    ), revised AS (
      INSERT INTO ${s}.streams (name, revision)
        SELECT a.stream, a.current + jsonb_array_length(a.events) FROM a
        ON CONFLICT (name) DO UPDATE SET revision = excluded.revision
    )
    SELECT count(*) INTO v_count FROM inserted;
    UPDATE ${s}.head SET position = v_head + v_count;
    -- Apart from the inserts: a statement does not see the rows its own CTEs insert.
    DELETE FROM ${s}.events e USING jsonb_array_elements(p_appends) AS a(x), ${s}.streams st
      WHERE st.name = a.x->>'stream' AND st.max_count IS NOT NULL AND e.stream = st.name AND e.revision <= st.revision - st.max_count;
    PERFORM pg_notify('${channel}', '');
    RETURN QUERY
      SELECT true, a.n, st.revision, v_head + sum(jsonb_array_length(a.x->'events')) OVER (ORDER BY a.n)
      FROM jsonb_array_elements(p_appends) WITH ORDINALITY AS a(x, n)
      JOIN ${s}.streams st ON st.name = a.x->>'stream'
      ORDER BY a.n;
  END $fn$;
`;

export const EVENT_STORE_SCHEMA: PostgresPlan = {
  component: 'events',
  what: 'event store (postgres)',
  markerTable: 'events',
  migrations: [{ version: 1, name: 'events, streams and head', sql: (t) => initialTables(t.schema) }],
  definitions: (t) => appendFunction(t.schema, appendChannel(t)) + appendManyFunction(t.schema, appendChannel(t)),
};

/** Migrates the event store's tables on the pool's database (what the store does before its first call). */
export const migrateEventStoreTables = (pool: pg.Pool, target: PostgresTarget) =>
  migratePostgres(pool, target, schemaLockKey(target), EVENT_STORE_SCHEMA);

/**
 * Brings the event store at `url` (its `schema` parameter, default `tock`) to this code's schema
 * version over one connection of its own, then closes it: for `tock migrate` and a service's start.
 */
export async function migratePostgresEventStore(url: string, options: { schema?: string } = {}): Promise<MigrationResult> {
  const target = postgresTarget(url, 'tock', options.schema);
  const pool = createPool(target, { max: 1 });
  try {
    return await migrateEventStoreTables(pool, target);
  } catch (error) {
    throw translatePgError(error, 'event store');
  } finally {
    await pool.end();
  }
}
