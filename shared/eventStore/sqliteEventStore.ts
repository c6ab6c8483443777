/**
 * EventStore on SQLite (better-sqlite3): the embedded deployment, and several processes of one
 * machine sharing one database file.
 *
 * Cross-process safety rests on SQLite itself: WAL mode (readers never block the writer), a busy
 * timeout (a writer waits for the lock instead of failing), and appends in BEGIN IMMEDIATE
 * transactions, which take the write lock before reading the stream's revision, so the check and
 * the insert cannot interleave with another process. Positions are an AUTOINCREMENT key handed out
 * while that lock is held, hence in commit order: a reader's snapshot always holds a prefix of the
 * positions and a subscription reading `position > checkpoint` never skips an event committed later.
 */
import Database from 'better-sqlite3';
import { migrateSqlite, privateDbFile, retryWhileBusy, retryWhileBusyAsync, useWal } from '../sqlite.ts';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { AppError } from '../errors.ts';
import {
  categoryOf,
  checkAppendMany,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventData,
  type EventStore,
  type ExpectedRevision,
  type ReadOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
} from './eventStore.ts';
import { createAppendedTail } from './appendedTail.ts';
import { SQLITE_EVENT_STORE_SCHEMA } from './sqliteEventStoreSchema.ts';
import { acquireNotifier, decodedOnce, notifyAppended, PAGE_SIZE, releaseNotifier, startSubscription, type SubscriptionSource } from './sqliteSubscription.ts';

export interface SqliteEventStoreOptions {
  /** How often an idle subscription looks for events appended by other processes. Default 25 ms. */
  pollIntervalMs?: number;
  /** How long a write waits for another process's lock before failing as UNAVAILABLE. Default 10 s. */
  busyTimeoutMs?: number;
}

// Long enough to ride out another process's batch append, short enough to surface a stuck lock.
export const BUSY_TIMEOUT_MS = 10_000;
// What one write attempt may block the event loop waiting for the lock; past it the wait goes on
// between attempts (retryWhileBusyAsync), so a lock held for long never freezes the process.
const ATTEMPT_BUSY_MS = 25;

interface EventRow {
  position: number;
  id: string;
  stream: string;
  revision: number;
  category: string;
  type: string;
  data: string;
  metadata: string;
  time: number;
}

/** Translates driver failures into the project's error type; our own errors pass through. */
function translate(error: unknown): unknown {
  if (error instanceof WrongExpectedRevisionError || error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof Database.SqliteError ? error.code : '';
  const busy = code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
  return new AppError(busy ? 'UNAVAILABLE' : 'INTERNAL', `event store (sqlite): ${message}`, { cause: error });
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.id,
    stream: row.stream,
    type: row.type,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    revision: row.revision,
    position: BigInt(row.position),
    time: row.time,
  };
}

function satisfies(expected: ExpectedRevision, current: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current < 0;
  if (expected === 'stream_exists') return current >= 0;
  return expected === current;
}

/**
 * Opens (creating if needed) an event store in the SQLite file at `path`; `:memory:` gives a private
 * in-memory store for one process. Several processes may open the same file at once. The tables
 * are migrated to this code's schema version; a file a newer Tock migrated is refused
 * (SchemaAheadError).
 */
export function openSqliteEventStore(path: string, options: SqliteEventStoreOptions = {}): EventStore {
  const pollIntervalMs = options.pollIntervalMs ?? 25;
  const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  const memory = path === ':memory:';
  privateDbFile(path);
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    if (!memory) useWal(db, busyTimeoutMs);
    // NORMAL is SQLite's recommended setting under WAL: commits stay atomic and the file stays sound
    // after a crash; only the last commits before a power cut may be lost, not reordered.
    db.pragma('synchronous = NORMAL');
    retryWhileBusy(() => migrateSqlite(db, SQLITE_EVENT_STORE_SCHEMA), busyTimeoutMs);
    db.pragma(`busy_timeout = ${Math.min(ATTEMPT_BUSY_MS, busyTimeoutMs)}`);
  } catch (error) {
    db.close();
    throw translate(error);
  }

  const getStream = db.prepare<[string], { revision: number; max_count: number | null }>(
    'SELECT revision, max_count FROM streams WHERE name = ?',
  );
  const setRevision = db.prepare<[string, number]>(
    'INSERT INTO streams (name, revision) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET revision = excluded.revision',
  );
  const setMaxCount = db.prepare<[string, number]>(
    'INSERT INTO streams (name, revision, max_count) VALUES (?, -1, ?) ON CONFLICT (name) DO UPDATE SET max_count = excluded.max_count',
  );
  const insertEvent = db.prepare<[string, string, number, string, string, string, string, number]>(
    'INSERT INTO events (id, stream, revision, category, type, data, metadata, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const deleteUpTo = db.prepare<[string, number]>('DELETE FROM events WHERE stream = ? AND revision <= ?');
  const lastPosition = db.prepare<[string], { position: number }>(
    'SELECT position FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1',
  );
  const readForwards = db.prepare<[string, number, number], EventRow>(
    'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?',
  );
  const readBackwards = db.prepare<[string, number, number], EventRow>(
    'SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?',
  );
  const pageAll = db.prepare<[number, number], EventRow>(
    'SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?',
  );
  const pageCategory = db.prepare<[string, number, number], EventRow>(
    'SELECT * FROM events WHERE category = ? AND position > ? ORDER BY position LIMIT ?',
  );
  const tail = createAppendedTail<EventRow>();
  // Changes when another connection (another process, another store object) commits to the file:
  // then rows may follow the tail's end, and the page after it is read from the file. A few µs,
  // where a page query costs three times that and more per row.
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let seenVersion = dataVersion.get();
  // What the open transaction inserted and deleted: the tail's once it commits, forgotten if not.
  let inserted: EventRow[] = [];
  let cuts: [string, number][] = [];
  const inTransaction = <T>(fn: () => T): T => {
    try {
      const result = fn();
      tail.appended(inserted);
      for (const [stream, revision] of cuts) tail.truncated(stream, revision);
      return result;
    } finally {
      inserted = [];
      cuts = [];
    }
  };

  /** Appends to one stream inside the caller's transaction. */
  const appendOne = (stream: string, events: EventData[], expected: ExpectedRevision, time: number): AppendResult => {
    const row = getStream.get(stream);
    const current = row ? row.revision : -1;
    if (!satisfies(expected, current)) {
      throw new WrongExpectedRevisionError(stream, expected, current < 0 ? 'no_stream' : current);
    }
    if (events.length === 0) {
      return { nextRevision: current, position: BigInt(lastPosition.get(stream)?.position ?? 0) };
    }
    const category = categoryOf(stream);
    let revision = current;
    let position: number | bigint = 0;
    for (const event of events) {
      revision++;
      const id = event.id ?? randomUUID();
      const data = JSON.stringify(event.data);
      const metadata = JSON.stringify(event.metadata ?? {});
      position = insertEvent.run(id, stream, revision, category, event.type, data, metadata, time).lastInsertRowid;
      inserted.push({ position: Number(position), id, stream, revision, category, type: event.type, data, metadata, time });
    }
    setRevision.run(stream, revision);
    if (row?.max_count) {
      deleteUpTo.run(stream, revision - row.max_count);
      cuts.push([stream, revision - row.max_count]);
    }
    return { nextRevision: revision, position: BigInt(position) };
  };
  const append = db.transaction((stream: string, events: EventData[], expected: ExpectedRevision) => appendOne(stream, events, expected, Date.now()));
  // A refused stream throws out of the transaction, which rolls back the streams before it.
  const appendMany = db.transaction((appends: StreamAppend[]) => {
    const time = Date.now();
    return appends.map((a) => appendOne(a.stream, a.events, a.expectedRevision ?? 'any', time));
  });

  const truncate = db.transaction((stream: string, maxCount: number) => {
    setMaxCount.run(stream, maxCount);
    const upTo = getStream.get(stream)!.revision - maxCount;
    deleteUpTo.run(stream, upTo);
    cuts.push([stream, upTo]);
  });

  // A private database has no other process to poll for and no other store object to share wake-ups with.
  const notifierKey = memory ? `:memory:${randomUUID()}` : resolve(path);
  const notifier = acquireNotifier(notifierKey);
  const subscriptions = new Set<Subscription>();
  let closed = false;

  const guard = <T>(fn: () => T): Promise<T> => {
    try {
      if (closed) throw new AppError('INTERNAL', 'event store (sqlite) is closed');
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(translate(error));
    }
  };
  /** A write: waits for the lock (up to busyTimeoutMs) without blocking the event loop. */
  const guardWrite = async <T>(fn: () => T): Promise<T> => {
    try {
      return await retryWhileBusyAsync(() => {
        if (closed) throw new AppError('INTERNAL', 'event store (sqlite) is closed');
        return fn();
      }, busyTimeoutMs);
    } catch (error) {
      throw translate(error);
    }
  };

  const source: SubscriptionSource<EventRow> = {
    notifier,
    memory,
    pollIntervalMs,
    readPage: (options: SubscribeOptions, checkpoint: number) => {
      try {
        const version = dataVersion.get();
        if (version !== seenVersion) {
          seenVersion = version;
          tail.otherWriter();
        }
        const fromTail = tail.page(checkpoint, options.category, PAGE_SIZE);
        if (fromTail) return fromTail;
        const rows = options.category === undefined ? pageAll.all(checkpoint, PAGE_SIZE) : pageCategory.all(options.category, checkpoint, PAGE_SIZE);
        return { rows, through: rows[rows.length - 1]?.position ?? checkpoint };
      } catch (error) {
        throw translate(error);
      }
    },
    toRecorded: decodedOnce(toRecorded),
    subscriptions,
  };

  return {
    appendToStream: (stream, events, options = {}) =>
      guardWrite(() => {
        const result = inTransaction(() => append.immediate(stream, events, options.expectedRevision ?? 'any'));
        if (events.length > 0) notifyAppended(notifier);
        return result;
      }),

    appendMany: (appends) =>
      guardWrite(() => {
        checkAppendMany(appends);
        if (appends.length === 0) return [];
        const results = inTransaction(() => appendMany.immediate(appends));
        notifyAppended(notifier);
        return results;
      }),

    readStream: <T>(stream: string, options: ReadOptions = {}) =>
      guard(() => {
        const limit = options.maxCount ?? -1;
        const rows =
          options.direction === 'backwards'
            ? readBackwards.all(stream, options.fromRevision ?? Number.MAX_SAFE_INTEGER, limit)
            : readForwards.all(stream, options.fromRevision ?? 0, limit);
        return rows.map(toRecorded) as RecordedEvent<T>[];
      }),

    subscribe: (options, handler, onError) => {
      if (closed) throw new AppError('INTERNAL', 'event store (sqlite) is closed');
      return startSubscription(source, options, handler, onError);
    },

    setStreamMaxCount: (stream, maxCount) =>
      guardWrite(() => {
        if (!Number.isInteger(maxCount) || maxCount < 1) {
          throw new AppError('INVALID_PARAMETER', `max count must be a positive integer, got ${maxCount}`);
        }
        inTransaction(() => truncate.immediate(stream, maxCount));
      }),

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.close()));
      releaseNotifier(notifierKey, notifier);
      db.close();
    },
  };
}
