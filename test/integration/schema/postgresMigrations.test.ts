/**
 * Versioned PostgreSQL schemas against a real server: the runner (order, one transaction, the
 * refusal of a database ahead, replicas migrating at once) and the two schemas Tock keeps there,
 * the event store and the logs read model, including a database the code before schema versions
 * made (test/fixtures/postgres-unversioned.sql).
 */
import { create } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { openPostgresEventStore } from '../../../shared/eventStore/postgresEventStore.ts';
import { EVENT_STORE_SCHEMA, migratePostgresEventStore } from '../../../shared/eventStore/postgresEventStoreSchema.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createPool, migratePostgres, postgresTarget, type PostgresPlan } from '../../../shared/postgres.ts';
import { latestVersion, SchemaAheadError } from '../../../shared/schemaVersions.ts';
import { LOGS_SCHEMA, migratePostgresLogsView } from '../../../services/logs/postgresLogsSchema.ts';
import { openPostgresLogsView } from '../../../services/logs/postgresLogsView.ts';
import { dropSchema, POSTGRES_URL, rawClient, requirePostgres, schemaName } from '../../support/postgres.ts';

const FIXTURE_SCHEMA = 'unversioned_fixture';

/** The rows of a schema's version table, as `component:version`. */
async function versions(db: pg.Client, schema: string): Promise<string[]> {
  const { rows } = await db.query<{ component: string; version: number }>(`SELECT component, version FROM "${schema}".tock_schema_version ORDER BY component, version`);
  return rows.map((r) => `${r.component}:${r.version}`);
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('versioned PostgreSQL schemas', function () {
  this.timeout(30_000);
  before(requirePostgres);
  let db: pg.Client;
  const schemas: string[] = [];
  const fresh = () => {
    const s = schemaName('tock_mig');
    schemas.push(s, `${s}_logs`);
    return s;
  };

  before(async () => {
    db = await rawClient();
  });
  after(async () => {
    await db?.end();
    await Promise.all(schemas.map((s) => dropSchema(s)));
  });

  describe('the runner', () => {
    // A two-step plan of the test's own, so order, resumption and rollback can be seen.
    const plan = (second = 'ALTER TABLE {schema}.things ADD COLUMN colour text'): PostgresPlan => ({
      component: 'things',
      what: 'things (postgres)',
      markerTable: 'things',
      migrations: [
        { version: 1, name: 'things', sql: (t) => `CREATE TABLE IF NOT EXISTS ${t.schema}.things (id integer PRIMARY KEY)` },
        { version: 2, name: 'colour', sql: (t) => second.replaceAll('{schema}', t.schema) },
      ],
    });
    const run = async (schema: string, p: PostgresPlan) => {
      const target = postgresTarget(POSTGRES_URL, 'unused', schema);
      const pool = createPool(target, { max: 1 });
      try {
        return await migratePostgres(pool, target, `test ${schema}`, p);
      } finally {
        await pool.end();
      }
    };

    it('applies every migration in order on a fresh schema, then nothing on the next run', async () => {
      const s = fresh();
      expect(await run(s, plan())).to.deep.equal({ component: 'things', from: 0, to: 2, adopted: false });
      expect(await versions(db, s)).to.deep.equal(['things:1', 'things:2']);
      const { rows } = await db.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'things' ORDER BY ordinal_position`, [s]);
      expect(rows.map((r) => r.column_name)).to.deep.equal(['id', 'colour']);
      expect(await run(s, plan())).to.deep.equal({ component: 'things', from: 2, to: 2, adopted: false });
    });

    it('applies only what is missing, and a failing migration leaves the version the database had', async () => {
      const s = fresh();
      await run(s, { ...plan(), migrations: plan().migrations.slice(0, 1) });
      expect(await versions(db, s)).to.deep.equal(['things:1']);
      const broken = plan('ALTER TABLE {schema}.things ADD COLUMN colour text; SELECT 1 / 0');
      const error = await rejection(run(s, broken));
      expect(error.message).to.match(/division by zero/);
      expect(await versions(db, s)).to.deep.equal(['things:1']);
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'colour'`, [s]);
      expect(rows[0].n, 'the half-applied column rolled back').to.equal(0);
      expect(await run(s, plan())).to.deep.equal({ component: 'things', from: 1, to: 2, adopted: false });
    });

    it('lets two migrators run at once: one applies, the other waits and finds it done, neither fails', async () => {
      const s = fresh();
      const results = await Promise.all([run(s, plan()), run(s, plan())]);
      expect(results.map((r) => `${r.from}->${r.to}`).sort()).to.deep.equal(['0->2', '2->2']);
      expect(await versions(db, s)).to.deep.equal(['things:1', 'things:2']);
    });

    it('refuses a schema past its list, naming both versions, and changes nothing', async () => {
      const s = fresh();
      await run(s, plan());
      const error = await rejection(run(s, { ...plan(), migrations: plan().migrations.slice(0, 1) }));
      expect(error).to.be.instanceOf(SchemaAheadError);
      expect(error.message).to.equal("things (postgres): the database's schema is at version 2, newer than this Tock's schema version 1: refusing to use it (a newer Tock has migrated it; run that version or a later one)");
      expect(await versions(db, s)).to.deep.equal(['things:1', 'things:2']);
    });
  });

  describe('the event store and the logs read model', () => {
    it('are at the latest version on a fresh schema, each in its own version rows', async () => {
      const s = fresh();
      expect(await migratePostgresEventStore(POSTGRES_URL, { schema: s })).to.deep.equal({ component: 'events', from: 0, to: latestVersion(EVENT_STORE_SCHEMA.migrations), adopted: false });
      expect(await migratePostgresLogsView(POSTGRES_URL, { schema: `${s}_logs` })).to.deep.equal({ component: 'logs', from: 0, to: latestVersion(LOGS_SCHEMA.migrations), adopted: false });
      // Both in one schema (LOGS_DB_URL may name the event store's): each part keeps its own rows.
      expect((await migratePostgresLogsView(POSTGRES_URL, { schema: s })).from).to.equal(0);
      expect(await versions(db, s)).to.deep.equal(['events:1', 'logs:1']);
      const store = openPostgresEventStore(POSTGRES_URL, { schema: s });
      try {
        await store.appendToStream('thing-1', [{ type: 'Made', data: {} }]);
        expect((await store.readStream('thing-1')).map((e) => e.type)).to.deep.equal(['Made']);
      } finally {
        await store.close();
      }
    });

    it('recognise a database the code before schema versions made: recorded as version 1, its data kept, both stores working on', async () => {
      const s = fresh();
      const dump = readFileSync('test/fixtures/postgres-unversioned.sql', 'utf8').replaceAll(FIXTURE_SCHEMA, s);
      await db.query(dump);
      expect(await migratePostgresEventStore(POSTGRES_URL, { schema: s })).to.deep.equal({ component: 'events', from: 0, to: 1, adopted: true });
      expect(await migratePostgresLogsView(POSTGRES_URL, { schema: `${s}_logs` })).to.deep.equal({ component: 'logs', from: 0, to: 1, adopted: true });
      expect(await versions(db, s)).to.deep.equal(['events:1']);
      expect(await versions(db, `${s}_logs`)).to.deep.equal(['logs:1']);

      const store = openPostgresEventStore(POSTGRES_URL, { schema: s });
      const logs = openPostgresLogsView(POSTGRES_URL, { schema: `${s}_logs` });
      try {
        expect((await store.readStream('fixture-1')).map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 2 }]);
        const appended = await store.appendToStream('fixture-1', [{ type: 'FixtureAdded', data: { n: 3 } }], { expectedRevision: 1 });
        expect(appended).to.deep.equal({ nextRevision: 2, position: 4n });
        expect((await logs.query({ accountId: 1n, jobId: 1n })).map((e) => [e.id, e.execution.runId])).to.deep.equal([[1, '1:1764000000000']]);
        const execution = create(ExecutionSchema, { runId: '1:1764000060000', accountId: 1n, jobId: 1n, outcome: ExecutionOutcome.SUCCEEDED, time: 1764000060n });
        expect(await logs.record(execution)).to.equal(true);
        expect((await logs.query({ accountId: 1n, jobId: 1n })).map((e) => e.id)).to.deep.equal([2, 1]);
      } finally {
        await store.close();
        await logs.close();
      }
    });

    it('declare their functions again on every run: one an older process put back is replaced by this code\'s', async () => {
      const s = fresh();
      await migratePostgresEventStore(POSTGRES_URL, { schema: s });
      await migratePostgresLogsView(POSTGRES_URL, { schema: `${s}_logs` });
      const bodies = async () =>
        (await db.query<{ nspname: string; prosrc: string }>(`SELECT n.nspname, p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname IN ($1, $2) ORDER BY n.nspname, p.proname`, [s, `${s}_logs`])).rows;
      const ours = await bodies();
      expect(ours.map((r) => r.nspname), 'append and append_many, record_batch').to.deep.equal([s, s, `${s}_logs`]);
      // What the code before versions does at its start: its own bodies, without looking at versions.
      await db.query(`CREATE OR REPLACE FUNCTION "${s}".append(p_stream text, p_category text, p_expected text, p_time bigint, p_events jsonb)
        RETURNS TABLE (ok boolean, next_revision bigint, last_position bigint) LANGUAGE sql AS $$ SELECT false, 0::bigint, 0::bigint $$`);
      await db.query(`CREATE OR REPLACE FUNCTION "${s}".append_many(p_time bigint, p_appends jsonb)
        RETURNS TABLE (ok boolean, n bigint, next_revision bigint, last_position bigint) LANGUAGE sql AS $$ SELECT false, 0::bigint, 0::bigint, 0::bigint $$`);
      await db.query(`CREATE OR REPLACE FUNCTION "${s}_logs".record_batch(p_ids bigint[], p_run_ids text[], p_accounts bigint[], p_jobs bigint[], p_outcomes integer[],
        p_times bigint[], p_haystacks text[], p_data bytea[], p_keep integer, p_keep_failures integer, p_failed integer) RETURNS boolean[] LANGUAGE sql AS $$ SELECT '{}'::boolean[] $$`);
      expect(await bodies()).to.not.deep.equal(ours);
      expect((await migratePostgresEventStore(POSTGRES_URL, { schema: s })).from).to.equal(1);
      expect((await migratePostgresLogsView(POSTGRES_URL, { schema: `${s}_logs` })).from).to.equal(1);
      expect(await bodies()).to.deep.equal(ours);
    });

    it('refuse a database a newer Tock migrated: no call of the store or the view writes to it', async () => {
      const s = fresh();
      await migratePostgresEventStore(POSTGRES_URL, { schema: s });
      await migratePostgresLogsView(POSTGRES_URL, { schema: `${s}_logs` });
      await db.query(`INSERT INTO "${s}".tock_schema_version (component, version, name) VALUES ('events', 2, 'from a newer Tock')`);
      await db.query(`INSERT INTO "${s}_logs".tock_schema_version (component, version, name) VALUES ('logs', 5, 'from a newer Tock')`);

      const ahead = await rejection(migratePostgresEventStore(POSTGRES_URL, { schema: s }));
      expect(ahead).to.be.instanceOf(SchemaAheadError);
      expect(ahead.message).to.match(/^event store \(postgres\): the database's schema is at version 2, newer than this Tock's schema version 1: refusing/);
      const store = openPostgresEventStore(POSTGRES_URL, { schema: s });
      const logs = openPostgresLogsView(POSTGRES_URL, { schema: `${s}_logs` });
      try {
        expect((await rejection(store.appendToStream('thing-1', [{ type: 'Made', data: {} }]))).message).to.equal(ahead.message);
        const execution = create(ExecutionSchema, { runId: '1:1', accountId: 1n, jobId: 1n, outcome: ExecutionOutcome.SUCCEEDED, time: 1n });
        expect((await rejection(logs.record(execution))).message).to.match(/^logs read model \(postgres\): the database's schema is at version 5, newer than this Tock's schema version 1/);
      } finally {
        await store.close();
        await logs.close();
      }
      const { rows } = await db.query(`SELECT (SELECT count(*) FROM "${s}".events)::int AS events, (SELECT count(*) FROM "${s}_logs".log)::int AS log`);
      expect(rows[0]).to.deep.equal({ events: 0, log: 0 });
    });

    it('migrate once when two replicas start together, with no error', async () => {
      const s = fresh();
      const results = await Promise.all([migratePostgresEventStore(POSTGRES_URL, { schema: s }), migratePostgresEventStore(POSTGRES_URL, { schema: s })]);
      expect(results.map((r) => `${r.from}->${r.to}`).sort()).to.deep.equal(['0->1', '1->1']);
      // Two stores opened at once and used at once: their first calls migrate under the same lock.
      const stores = [openPostgresEventStore(POSTGRES_URL, { schema: `${s}_2` }), openPostgresEventStore(POSTGRES_URL, { schema: `${s}_2` })];
      schemas.push(`${s}_2`);
      try {
        await Promise.all(stores.map((store, i) => store.appendToStream(`thing-${i}`, [{ type: 'Made', data: {} }])));
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
      expect(await versions(db, s)).to.deep.equal(['events:1']);
      expect(await versions(db, `${s}_2`)).to.deep.equal(['events:1']);
    });
  });
});
