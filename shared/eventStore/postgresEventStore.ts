/**
 * EventStore on PostgreSQL (node-postgres): the multi-node store that any number of jobs and
 * planner replicas can share.
 *
 * Ordering: a catch-up reader pages `position > checkpoint`, so a position must never become
 * visible after a larger one (the classic gap: with a sequence, a transaction that drew 7 can
 * commit after one that drew 8, and a reader already past 8 never sees 7). Here every append runs
 * as one call of the `append` function, which first locks the single row of `head` (the last
 * position handed out) and keeps that lock until it commits. Appends therefore take turns: each
 * one's positions follow the previous one's, which has already committed, so any snapshot holds a
 * prefix of the positions and a reader never skips one. The same lock makes the expected-revision
 * check and the insert atomic, and keeps positions gap-free (a refused append writes nothing).
 *
 * One round trip per append (the function does the check, the inserts and the NOTIFY that wakes
 * subscriptions). Appends are serialized across the whole store: throughput is bounded by one
 * commit at a time, which batching (several events per append) amortizes.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { AppError } from '../errors.ts';
import { createPool, postgresTarget, translatePgError, withSchemaLock } from '../postgres.ts';
import { single } from '../single.ts';
import {
  categoryOf,
  WrongExpectedRevisionError,
  type EventData,
  type EventStore,
  type ExpectedRevision,
  type ReadOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './eventStore.ts';
import { AppendListener, PAGE_SIZE, startSubscription, type PageSource } from './postgresSubscription.ts';

export interface PostgresEventStoreOptions {
  /** The schema of the tables; default: the URL's `schema` parameter, else `tock`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /** Told about connections that broke (idle ones in the pool, the LISTEN one); they are replaced. */
  onConnectionError?: (error: unknown) => void;
}

const schemaSql = (s: string, channel: string) => `
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

interface EventRow {
  position: string;
  id: string;
  stream: string;
  revision: string;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
  time: string;
}

const toRecorded = (row: EventRow): RecordedEvent => ({
  id: row.id,
  stream: row.stream,
  type: row.type,
  data: row.data,
  metadata: row.metadata ?? {},
  revision: Number(row.revision),
  position: BigInt(row.position),
  time: Number(row.time),
});

const translate = (error: unknown) =>
  error instanceof WrongExpectedRevisionError ? error : translatePgError(error, 'event store');

/**
 * Opens the event store in the PostgreSQL database at `url` (`postgres://user:pass@host:5432/db`).
 * Tables are created on first use, so opening never blocks and a server that is not up yet only
 * fails the calls made before it is.
 */
export function openPostgresEventStore(url: string, options: PostgresEventStoreOptions = {}): EventStore {
  const target = postgresTarget(url, 'tock', options.schema);
  const s = target.schema;
  // A channel per schema: two installations sharing a database do not wake each other.
  const channel = `tock_events_${target.schemaName}`;
  const report = options.onConnectionError ?? (() => undefined);
  const pool = createPool(target, { max: options.maxConnections, onIdleError: report });
  const listener = new AppendListener(target.connectionString, channel, report);
  const subscriptions = new Set<Subscription>();
  let closed = false;
  let schemaReady: Promise<void> | undefined;

  /** Creates the tables once; a failure (server down) is retried by the next call instead of sticking. */
  const ready = () =>
    (schemaReady ??= withSchemaLock(pool, `tock events ${target.schemaName}`, async (client) => {
      await client.query(schemaSql(s, channel));
    }).catch((error: unknown) => {
      schemaReady = undefined;
      throw error;
    }));

  const query = async <R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<R[]> => {
    if (closed) throw new AppError('INTERNAL', 'event store (postgres) is closed');
    try {
      await ready();
      return (await pool.query<R>(sql, params)).rows;
    } catch (error) {
      throw translate(error);
    }
  };

  const pageAll = `SELECT * FROM ${s}.events WHERE position > $1 ORDER BY position LIMIT ${PAGE_SIZE}`;
  const pageCategory = `SELECT * FROM ${s}.events WHERE category = $2 AND position > $1 ORDER BY position LIMIT ${PAGE_SIZE}`;
  const source: PageSource = {
    listener,
    ready: async () => {
      try {
        await ready();
        await listener.ready();
      } catch (error) {
        throw translate(error);
      }
    },
    readPage: async (options: SubscribeOptions, checkpoint: bigint) => {
      const rows =
        options.category === undefined
          ? await query<EventRow>(pageAll, [String(checkpoint)])
          : await query<EventRow>(pageCategory, [String(checkpoint), options.category]);
      return rows.map(toRecorded);
    },
    subscriptions,
  };

  return {
    async appendToStream(stream, events: EventData[], options = {}) {
      const expected: ExpectedRevision = options.expectedRevision ?? 'any';
      const time = Date.now();
      const payload = JSON.stringify(
        events.map((e) => ({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: e.metadata ?? {} })),
      );
      const row = single(
        await query<{ ok: boolean; next_revision: string; last_position: string }>(`SELECT * FROM ${s}.append($1, $2, $3, $4, $5::jsonb)`, [
          stream,
          categoryOf(stream),
          String(expected),
          time,
          payload,
        ]),
        `append to ${stream}`,
      );
      const current = Number(row.next_revision);
      if (!row.ok) throw new WrongExpectedRevisionError(stream, expected, current < 0 ? 'no_stream' : current);
      return { nextRevision: current, position: BigInt(row.last_position) };
    },

    async readStream<T>(stream: string, options: ReadOptions = {}) {
      const backwards = options.direction === 'backwards';
      const rows = await query<EventRow>(
        backwards
          ? `SELECT * FROM ${s}.events WHERE stream = $1 AND revision <= $2 ORDER BY revision DESC LIMIT $3`
          : `SELECT * FROM ${s}.events WHERE stream = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
        [stream, options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0), options.maxCount ?? null],
      );
      return rows.map(toRecorded) as RecordedEvent<T>[];
    },

    subscribe(options, handler, onError) {
      if (closed) throw new AppError('INTERNAL', 'event store (postgres) is closed');
      return startSubscription(source, options, handler, onError);
    },

    async setStreamMaxCount(stream, maxCount) {
      if (!Number.isInteger(maxCount) || maxCount < 1) {
        throw new AppError('INVALID_PARAMETER', `max count must be a positive integer, got ${maxCount}`);
      }
      await query(
        `WITH setting AS (
           INSERT INTO ${s}.streams (name, revision, max_count) VALUES ($1, -1, $2)
           ON CONFLICT (name) DO UPDATE SET max_count = excluded.max_count
           RETURNING revision
         )
         DELETE FROM ${s}.events WHERE stream = $1 AND revision <= (SELECT revision FROM setting) - $2`,
        [stream, maxCount],
      );
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((sub) => sub.close()));
      await listener.close();
      await pool.end();
    },
  };
}
