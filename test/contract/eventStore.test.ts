/**
 * Runs the EventStore contract against each adapter: SQLite in memory, SQLite in a temp file,
 * PostgreSQL (test/support/postgres.ts) and EventStoreDB when ESDB_URL names a server. Adds what only the file adapter promises: several
 * store objects and several processes sharing one database file.
 */
import { expect } from 'chai';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEsdbEventStore } from '../../shared/eventStore/esdbEventStore.ts';
import type { RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { openPostgresEventStore } from '../../shared/eventStore/postgresEventStore.ts';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';
import { dropSchema, POSTGRES_URL, requirePostgres, schemaName } from '../support/postgres.ts';
import { eventStoreContract } from './eventStoreContract.ts';
import { waitFor } from '../support/waitFor.ts';
import { spawnAppender, spawnOpener } from './support/spawnAppender.ts';

const tempDir = () => mkdtempSync(join(tmpdir(), 'tock-events-'));

eventStoreContract('sqlite :memory:', async () => {
  const store = openSqliteEventStore(':memory:');
  return { store, close: () => store.close() };
});

eventStoreContract('sqlite file', async () => {
  const dir = tempDir();
  const store = openSqliteEventStore(join(dir, 'events.db'));
  return {
    store,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('PostgreSQL', function () {
  before(requirePostgres);
  eventStoreContract('postgres', async () => {
    const schema = schemaName();
    const store = openPostgresEventStore(POSTGRES_URL, { schema });
    return {
      store,
      async close() {
        await store.close();
        await dropSchema(schema);
      },
    };
  });
});

if (process.env.ESDB_URL) {
  const url = process.env.ESDB_URL;
  eventStoreContract('eventstoredb', async () => {
    const store = openEsdbEventStore(url);
    return { store, close: () => store.close() };
  }, { atomicAppendMany: false });
} else {
  describe('EventStore contract: eventstoredb', function () {
    it('runs against the server named by ESDB_URL', function () {
      console.log('skipped: ESDB_URL is not set; EventStoreDB cannot run on this machine (no server is mocked)');
      this.skip();
    });
  });
}

describe('SQLite event store file shared by several store objects and processes', function () {
  this.timeout(60_000);
  let dir: string;
  let children: ChildProcessWithoutNullStreams[];

  beforeEach(() => {
    dir = tempDir();
    children = [];
  });
  afterEach(() => {
    for (const child of children) if (child.exitCode === null) child.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens one new file from several processes at once: none fails on the switch to WAL', async () => {
    const files = [0, 1, 2].map((round) => join(dir, `fresh-${round}.db`));
    const openers = Array.from({ length: 6 }, () => spawnOpener(files));
    children.push(...openers.map((o) => o.child));
    for (const [round, file] of files.entries()) {
      await Promise.all(openers.map((o) => o.line('ready')));
      for (const o of openers) o.child.stdin.write('go\n');
      await Promise.all(openers.map((o) => o.line('opened')));
      const store = openSqliteEventStore(file);
      const events: RecordedEvent[] = [];
      const all = store.subscribe({}, (e) => void events.push(e));
      await all.caughtUp;
      expect(events, `round ${round}: one event per process`).to.have.length(6);
      await all.close();
      await store.close();
    }
    expect(await Promise.all(openers.map((o) => o.exited))).to.deep.equal(openers.map(() => 0));
  });

  it('wakes subscriptions of another store object on the same file at once, without polling', async () => {
    const file = join(dir, 'events.db');
    const reader = openSqliteEventStore(file, { pollIntervalMs: 600_000 });
    const writer = openSqliteEventStore(file);
    const seen: RecordedEvent[] = [];
    const subscription = reader.subscribe({}, (e) => void seen.push(e));
    await subscription.caughtUp;
    await writer.appendToStream('job-1', [{ type: 'Ran', data: {} }]);
    await waitFor(() => seen.length === 1, 'the append made through the other store object');
    await reader.close();
    await writer.close();
  });

  it('lets processes append concurrently: the subscriber gets every event once, in order, without gaps', async () => {
    const file = join(dir, 'events.db');
    const workers = 3;
    const perWorker = 300;
    const rounds = 20;
    const store = openSqliteEventStore(file);
    const received: RecordedEvent[] = [];
    const subscription = store.subscribe({}, (e) => void received.push(e));
    await subscription.caughtUp;

    const appenders = Array.from({ length: workers }, (_, w) =>
      spawnAppender([file, `w${w}`, String(perWorker), 'race-1', String(rounds)]),
    );
    children = appenders.map((a) => a.child);
    await Promise.all(appenders.map((a) => a.ready));
    for (const a of appenders) a.child.stdin.write('go\n');
    const results = await Promise.all(appenders.map((a) => a.done));

    const total = workers * perWorker + rounds;
    await waitFor(() => received.length >= total, `${total} events (have ${received.length})`, 30_000);
    expect(received).to.have.length(total);
    // Positions are handed out under the write lock, so with no failed or trimmed append they are 1..total.
    expect(received.map((e) => e.position)).to.deep.equal(Array.from({ length: total }, (_, i) => BigInt(i + 1)));
    for (let w = 0; w < workers; w++) {
      const own = received.filter((e) => e.stream === `mp-w${w}`);
      expect(own.map((e) => e.data.i)).to.deep.equal(Array.from({ length: perWorker }, (_, i) => i));
      expect(own.map((e) => e.revision)).to.deep.equal(Array.from({ length: perWorker }, (_, i) => i));
    }

    const winners = Array.from({ length: rounds }, (_, round) => results.filter((r) => r.wins.includes(round)).map((r) => r.worker));
    for (const [round, won] of winners.entries()) expect(won, `winners of round ${round}`).to.have.length(1);
    const raced = await store.readStream('race-1');
    expect(raced.map((e) => e.data.round)).to.deep.equal(Array.from({ length: rounds }, (_, i) => i));
    expect(raced.map((e) => e.data.worker)).to.deep.equal(winners.map((w) => w[0]));

    // A fresh catch-up over the finished file agrees with what was delivered live.
    const replay: bigint[] = [];
    const again = store.subscribe({}, (e) => void replay.push(e.position));
    await again.caughtUp;
    expect(replay).to.deep.equal(received.map((e) => e.position));
    await store.close();
  });
});
