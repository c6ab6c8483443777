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
 * commit at a time, which batching amortizes: several events per append, several streams per
 * appendMany (the `append_many` function, the same lock and checks over all of them).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { AppError } from '../errors.ts';
import { createPool, postgresTarget, translatePgError } from '../postgres.ts';
import { single } from '../single.ts';
import {
  categoryOf,
  checkAppendMany,
  WrongExpectedRevisionError,
  type EventData,
  type EventStore,
  type ExpectedRevision,
  type ReadOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './eventStore.ts';
import { appendChannel, migrateEventStoreTables } from './postgresEventStoreSchema.ts';
import { AppendListener, PAGE_SIZE, startSubscription, type PageSource } from './postgresSubscription.ts';

export interface PostgresEventStoreOptions {
  /** The schema of the tables; default: the URL's `schema` parameter, else `tock`. */
  schema?: string;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /** Told about connections that broke (idle ones in the pool, the LISTEN one); they are replaced. */
  onConnectionError?: (error: unknown) => void;
}

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
 * Tables are created or migrated (postgresEventStoreSchema.ts) on first use, so opening never
 * blocks and a server that is not up yet only fails the calls made before it is. A database a
 * newer Tock migrated fails every call (SchemaAheadError), so nothing is written to it.
 */
export function openPostgresEventStore(url: string, options: PostgresEventStoreOptions = {}): EventStore {
  const target = postgresTarget(url, 'tock', options.schema);
  const s = target.schema;
  const channel = appendChannel(target);
  const report = options.onConnectionError ?? (() => undefined);
  const pool = createPool(target, { max: options.maxConnections, onIdleError: report });
  const listener = new AppendListener(target.connectionString, channel, report);
  const subscriptions = new Set<Subscription>();
  let closed = false;
  let schemaReady: Promise<void> | undefined;

  /**
   * Brings the tables to this code's schema version once, before the first call; a failure (server
   * down, or a database a newer Tock migrated) is tried again by the next call instead of sticking.
   */
  const ready = () =>
    (schemaReady ??= migrateEventStoreTables(pool, target).then(() => undefined, (error: unknown) => {
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

    async appendMany(appends) {
      checkAppendMany(appends);
      if (appends.length === 0) return [];
      const payload = JSON.stringify(
        appends.map((a) => ({
          stream: a.stream,
          category: categoryOf(a.stream),
          expected: String(a.expectedRevision ?? 'any'),
          events: a.events.map((e) => ({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: e.metadata ?? {} })),
        })),
      );
      const rows = await query<{ ok: boolean; n: string; next_revision: string; last_position: string }>(`SELECT * FROM ${s}.append_many($1, $2::jsonb)`, [Date.now(), payload]);
      const refused = rows.find((row) => !row.ok);
      if (refused) {
        const { stream, expectedRevision = 'any' } = appends[Number(refused.n) - 1]!;
        const current = Number(refused.next_revision);
        throw new WrongExpectedRevisionError(stream, expectedRevision, current < 0 ? 'no_stream' : current);
      }
      if (rows.length !== appends.length) throw new AppError('INTERNAL', `event store (postgres): appendMany of ${appends.length} streams answered ${rows.length} rows`);
      return rows.map((row) => ({ nextRevision: Number(row.next_revision), position: BigInt(row.last_position) }));
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
