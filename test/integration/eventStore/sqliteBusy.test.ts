import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../../shared/errors.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';

describe('SQLite event store: a lock held by another process', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'tock-busy-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an append that cannot get the lock in time fails as UNAVAILABLE (503, retry), with the driver error as its cause', async () => {
    const path = join(dir, 'events.db');
    const store = openSqliteEventStore(path, { busyTimeoutMs: 100 });
    // Another connection (as another jobs process would) holds the write lock.
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await store.appendToStream('cronjob-1', [{ type: 'JobEnabled', data: { at: 1 } }]).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(AppError);
      expect(error).to.include({ kind: 'UNAVAILABLE', httpStatus: 503 });
      expect((error as AppError).cause).to.have.property('code').that.matches(/^SQLITE_BUSY/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Once the lock is gone the same append goes through.
    expect((await store.appendToStream('cronjob-1', [{ type: 'JobEnabled', data: { at: 1 } }])).nextRevision).to.equal(0);
    await store.close();
  });
});
