/**
 * What only the PostgreSQL event store promises beyond the contract (run in eventStore.test.ts):
 * several processes appending at once, a subscriber never skipping an append that commits late,
 * and driver failures arriving as AppErrors.
 */
import { expect } from 'chai';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { AppError } from '../../shared/errors.ts';
import type { EventStore, RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { openPostgresEventStore } from '../../shared/eventStore/postgresEventStore.ts';
import { dropSchema, POSTGRES_URL, rawClient, requirePostgres, schemaName, urlWithSchema } from '../support/postgres.ts';
import { waitFor } from '../support/waitFor.ts';
import { spawnAppender } from './support/spawnAppender.ts';

describe('PostgreSQL event store shared by several processes', function () {
  this.timeout(90_000);
  before(requirePostgres);
  let schema: string;
  let store: EventStore;
  let children: ChildProcessWithoutNullStreams[];

  beforeEach(() => {
    schema = schemaName();
    store = openPostgresEventStore(POSTGRES_URL, { schema });
    children = [];
  });
  afterEach(async () => {
    for (const child of children) if (child.exitCode === null) child.kill();
    await store.close();
    await dropSchema(schema);
  });

  it('does not let a subscriber pass an append that commits after a later one started', async () => {
    const received: RecordedEvent[] = [];
    const subscription = store.subscribe({}, (e) => void received.push(e));
    await store.appendToStream('slow-1', [{ type: 'Warmup', data: {} }]);
    await subscription.caughtUp;
    await waitFor(() => received.length === 1, 'the warm-up event');

    // A writer whose transaction stays open, as a slow network or a busy server would keep it.
    const slow = await rawClient();
    try {
      await slow.query('BEGIN');
      await slow.query(`SELECT * FROM "${schema}".append('slow-1', 'slow', 'any', 0, '[{"id":"s","type":"Slow","data":{},"metadata":{}}]'::jsonb)`);
      const fast = store.appendToStream('fast-1', [{ type: 'Fast', data: {} }]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received, 'nothing visible while the first append is open').to.have.length(1);
      await slow.query('COMMIT');
      await fast;
    } finally {
      await slow.end();
    }
    await waitFor(() => received.length === 3, `both appends (have ${received.map((e) => e.type).join(",")})`);
    expect(received.map((e) => e.type)).to.deep.equal(['Warmup', 'Slow', 'Fast']);
    expect(received.map((e) => e.position)).to.deep.equal([1n, 2n, 3n]);
  });

  it('lets processes append concurrently: the subscriber gets every event once, in order, without gaps', async () => {
    const workers = 3;
    const perWorker = 200;
    const rounds = 20;
    const received: RecordedEvent[] = [];
    const subscription = store.subscribe({}, (e) => void received.push(e));
    await subscription.caughtUp;
    const categoryOnly: RecordedEvent[] = [];
    const race = store.subscribe({ category: 'race' }, (e) => void categoryOnly.push(e));
    await race.caughtUp;

    const url = urlWithSchema(schema);
    const appenders = Array.from({ length: workers }, (_, w) => spawnAppender([url, `w${w}`, String(perWorker), 'race-1', String(rounds)]));
    children = appenders.map((a) => a.child);
    await Promise.all(appenders.map((a) => a.ready));
    for (const a of appenders) a.child.stdin.write('go\n');
    const results = await Promise.all(appenders.map((a) => a.done));

    const total = workers * perWorker + rounds;
    await waitFor(() => received.length >= total, `${total} events (have ${received.length})`, 30_000);
    expect(received).to.have.length(total);
    // Positions are handed out while the previous append's lock is held: 1..total, no hole, no repeat.
    expect(received.map((e) => e.position)).to.deep.equal(Array.from({ length: total }, (_, i) => BigInt(i + 1)));
    for (let w = 0; w < workers; w++) {
      const own = received.filter((e) => e.stream === `mp-w${w}`);
      expect(own.map((e) => e.data.i)).to.deep.equal(Array.from({ length: perWorker }, (_, i) => i));
      expect(own.map((e) => e.revision)).to.deep.equal(Array.from({ length: perWorker }, (_, i) => i));
    }
    const winners = Array.from({ length: rounds }, (_, round) => results.filter((r) => r.wins.includes(round)).map((r) => r.worker));
    for (const [round, won] of winners.entries()) expect(won, `winners of round ${round}`).to.have.length(1);
    expect((await store.readStream('race-1')).map((e) => e.data.worker)).to.deep.equal(winners.map((w) => w[0]));
    await waitFor(() => categoryOnly.length === rounds, 'the race category');
    expect(categoryOnly.map((e) => e.revision)).to.deep.equal(Array.from({ length: rounds }, (_, i) => i));

    const replay: bigint[] = [];
    const again = store.subscribe({}, (e) => void replay.push(e.position));
    await again.caughtUp;
    expect(replay).to.deep.equal(received.map((e) => e.position));
  });

  it('wakes a subscription on another store object at once (NOTIFY, not polling)', async () => {
    const writer = openPostgresEventStore(POSTGRES_URL, { schema });
    try {
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribe({}, (e) => void seen.push(e));
      await subscription.caughtUp;
      const started = Date.now();
      await writer.appendToStream('job-1', [{ type: 'Ran', data: {} }]);
      await waitFor(() => seen.length === 1, 'the append made through the other store object');
      expect(Date.now() - started).to.be.below(2000);
    } finally {
      await writer.close();
    }
  });

  it('keeps delivering after the LISTEN connection is killed', async () => {
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribe({}, (e) => void seen.push(e));
    await subscription.caughtUp;
    const admin = await rawClient();
    try {
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN "tock_events_${schema}"' AND pid <> pg_backend_pid()`,
      );
      expect(killed.rowCount).to.equal(1);
    } finally {
      await admin.end();
    }
    await store.appendToStream('job-1', [{ type: 'AfterKill', data: {} }]);
    await waitFor(() => seen.length === 1, 'the event appended after the LISTEN connection died', 15_000);
  });
});

describe('PostgreSQL event store failures', function () {
  it('reports an unreachable server as UNAVAILABLE (retryable, 503), without the password', async () => {
    const store = openPostgresEventStore('postgres://tock:s3cret@127.0.0.1:1/tock');
    try {
      const error = await store.appendToStream('a-1', [{ type: 'A', data: {} }]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).code).to.equal(1);
      expect((error as AppError).kind).to.equal('UNAVAILABLE');
      expect((error as AppError).httpStatus).to.equal(503);
      expect((error as AppError).message).to.match(/event store \(postgres\)/).and.not.match(/s3cret/);
    } finally {
      await store.close();
    }
  });

  it('refuses a schema name it cannot quote safely', () => {
    expect(() => openPostgresEventStore('postgres://127.0.0.1/tock?schema=a"b')).to.throw(AppError, /schema/);
  });
});
