/**
 * Versioned SQLite schemas (embedded mode's DATA_DIR files): the same version table and rules as
 * PostgreSQL, including files the code before schema versions made
 * (test/fixtures/sqlite-unversioned-*.sql) and a file a newer Tock migrated.
 */
import { create } from '@bufbuild/protobuf';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSY_TIMEOUT_MS, openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { migrateSqliteEventStore as migrateFile, SQLITE_EVENT_STORE_SCHEMA } from '../../../shared/eventStore/sqliteEventStoreSchema.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { latestVersion, SchemaAheadError } from '../../../shared/schemaVersions.ts';
import { migrateSqliteLogsView, openSqliteLogsView, SQLITE_LOGS_SCHEMA } from '../../../services/logs/sqliteLogsView.ts';

const migrateSqliteEventStore = (path: string) => migrateFile(path, BUSY_TIMEOUT_MS);

const versions = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT component, version FROM tock_schema_version ORDER BY component, version').all() as { component: string; version: number }[]).map((r) => `${r.component}:${r.version}`);
  } finally {
    db.close();
  }
};

const load = (path: string, fixture: string) => {
  const db = new Database(path);
  db.exec(readFileSync(`test/fixtures/${fixture}`, 'utf8'));
  db.close();
};

const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
};

describe('versioned SQLite schemas', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tock-sqlite-mig-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('brings fresh files to the latest version, once', () => {
    expect(migrateSqliteEventStore(join(dir, 'events.db'))).to.deep.equal({ component: 'events', from: 0, to: latestVersion(SQLITE_EVENT_STORE_SCHEMA.migrations), adopted: false });
    expect(migrateSqliteEventStore(join(dir, 'events.db'))).to.deep.equal({ component: 'events', from: 1, to: 1, adopted: false });
    expect(migrateSqliteLogsView(join(dir, 'logs.db'))).to.deep.equal({ component: 'logs', from: 0, to: latestVersion(SQLITE_LOGS_SCHEMA.migrations), adopted: false });
    // One file holding both (LOGS_DB_URL=sqlite:events.db): each part keeps its own rows.
    migrateSqliteLogsView(join(dir, 'events.db'));
    expect(versions(join(dir, 'events.db'))).to.deep.equal(['events:1', 'logs:1', 'logs:2']);
  });

  it('recognises files the code before schema versions made: version 1 recorded, data kept, stores working on', async () => {
    load(join(dir, 'events.db'), 'sqlite-unversioned-events.sql');
    load(join(dir, 'logs.db'), 'sqlite-unversioned-logs.sql');
    expect(migrateSqliteEventStore(join(dir, 'events.db'))).to.deep.equal({ component: 'events', from: 0, to: 1, adopted: true });
    const store = openSqliteEventStore(join(dir, 'events.db'));
    try {
      expect((await store.readStream('fixture-1')).map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 2 }]);
      expect(await store.appendToStream('fixture-1', [{ type: 'FixtureAdded', data: { n: 3 } }], { expectedRevision: 1 })).to.deep.equal({ nextRevision: 2, position: 3n });
    } finally {
      await store.close();
    }
    // Opening is enough: the view migrates the file it opens.
    const logs = openSqliteLogsView(join(dir, 'logs.db'));
    try {
      // Version 2 widened the job index so that the summaries read it alone.
      expect(versions(join(dir, 'logs.db'))).to.deep.equal(['logs:1', 'logs:2']);
      await logs.record(create(ExecutionSchema, { runId: '1:1764000060000', accountId: 1n, jobId: 1n, outcome: ExecutionOutcome.SUCCEEDED, time: 1764000060n }));
      expect((await logs.query({ accountId: 1n, jobId: 1n })).map((e) => [e.id, e.execution.runId])).to.deep.equal([[2, '1:1764000060000'], [1, '1:1764000000000']]);
      const db = new Database(join(dir, 'logs.db'), { readonly: true });
      expect(db.prepare("SELECT name FROM pragma_index_info('log_job')").pluck().all()).to.deep.equal(['job_id', 'time', 'id', 'account_id', 'outcome']);
      db.close();
      const [summary] = await logs.summaries({ accountId: 1n, jobIds: [1n], recent: 5, since: 1764000000, hours: { from: 1764000000, count: 1 } });
      expect(summary).to.deep.include({ runsSince: 2, runsByHour: [2] });
      expect(summary!.last!.execution.runId).to.equal('1:1764000060000');
    } finally {
      await logs.close();
    }
  });

  it('refuses files a newer Tock migrated, naming both versions, and writes nothing to them', () => {
    migrateSqliteEventStore(join(dir, 'events.db'));
    migrateSqliteLogsView(join(dir, 'logs.db'));
    for (const [file, component] of [['events.db', 'events'], ['logs.db', 'logs']]) {
      const db = new Database(join(dir, file!));
      db.prepare('INSERT INTO tock_schema_version (component, version, name) VALUES (?, 3, ?)').run(component, 'from a newer Tock');
      db.close();
    }
    const store = thrown(() => openSqliteEventStore(join(dir, 'events.db')));
    expect(store).to.be.instanceOf(SchemaAheadError);
    expect(store.message).to.equal("event store (sqlite): the database's schema is at version 3, newer than this Tock's schema version 1: refusing to use it (a newer Tock has migrated it; run that version or a later one)");
    expect(thrown(() => migrateSqliteEventStore(join(dir, 'events.db'))).message).to.equal(store.message);
    expect(thrown(() => openSqliteLogsView(join(dir, 'logs.db'))).message).to.match(/^logs read model \(sqlite\): the database's schema is at version 3, newer than this Tock's schema version 2/);
    expect(versions(join(dir, 'events.db'))).to.deep.equal(['events:1', 'events:3']);
  });
});
