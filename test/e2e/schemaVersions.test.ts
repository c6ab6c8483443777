/**
 * Schema versions as an operator meets them: `tock migrate` run as a user runs it (PostgreSQL and
 * a DATA_DIR), a service that migrates a database left behind at start, and one that refuses to
 * start on a database a newer Tock migrated (a rolled-back image), naming both versions.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { dropSchema, rawClient, requirePostgres, schemaName, urlWithSchema } from '../support/postgres.ts';
import { distributedEnv, runCli, startService } from '../support/processes.ts';

const AHEAD = /the database's schema is at version 7, newer than this Tock's schema version 1: refusing to use it/;

/** Starts the jobs service as its own process; resolves to its output once it serves, or rejects with the output of its exit. */
async function jobsProcess(env: Record<string, string>) {
  const jobs = await startService('jobs', env, /jobs service listening/, 60_000);
  await jobs.kill();
  return jobs.output.join('');
}

async function startFails(env: Record<string, string>): Promise<string> {
  try {
    await jobsProcess(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the jobs service started');
}

describe('schema versions: tock migrate and service starts', function () {
  this.timeout(90_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-schema-e2e-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  describe('on PostgreSQL', () => {
    before(requirePostgres);
    const schema = schemaName('tock_schema_e2e');
    after(async () => {
      await dropSchema(schema);
      await dropSchema(`${schema}_logs`);
    });

    it('tock migrate recognises tables made before schema versions, then says they are up to date; a service starts on them', async () => {
      const db = await rawClient();
      try {
        await db.query(readFileSync('test/fixtures/postgres-unversioned.sql', 'utf8').replaceAll('unversioned_fixture', schema));
      } finally {
        await db.end();
      }
      const env = await distributedEnv(dataDir, { NATS_URL: '', EVENTSTORE_URL: urlWithSchema(schema) });
      const first = await runCli(['migrate'], env);
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout.split('\n').filter(Boolean)).to.deep.equal([
        `event store: postgres (127.0.0.1:5432/postgres, schema ${schema}): version 0 -> 1 (tables made before schema versions recorded as version 1)`,
        `logs read model: postgres (127.0.0.1:5432/postgres, schema ${schema}_logs): version 0 -> 1 (tables made before schema versions recorded as version 1)`,
      ]);
      const again = await runCli(['migrate', '--json'], env);
      expect(again.code, again.stderr).to.equal(0);
      expect(JSON.parse(again.stdout).map((p: { part: string; from: number; to: number }) => `${p.part} ${p.from}->${p.to}`)).to.deep.equal(['event store 1->1', 'logs read model 1->1']);
      expect(await jobsProcess(env)).to.match(/jobs service listening/);
    });

    it('a service migrates a fresh schema when it starts', async () => {
      const fresh = schemaName('tock_schema_e2e');
      try {
        const env = await distributedEnv(dataDir, { NATS_URL: '', EVENTSTORE_URL: urlWithSchema(fresh) });
        expect(await jobsProcess(env)).to.match(/"from":0,"to":1,"adopted":false,"msg":"event store schema migrated"/);
        const status = await runCli(['migrate'], env);
        expect(status.stdout).to.include(`schema ${fresh}): version 1, up to date`);
      } finally {
        await dropSchema(fresh);
        await dropSchema(`${fresh}_logs`);
      }
    });

    it('a database a newer Tock migrated: tock migrate and the service refuse it, naming both versions', async () => {
      const db = await rawClient();
      try {
        await db.query(`INSERT INTO "${schema}".tock_schema_version (component, version, name) VALUES ('events', 7, 'from a newer Tock')`);
      } finally {
        await db.end();
      }
      const env = await distributedEnv(dataDir, { NATS_URL: '', EVENTSTORE_URL: urlWithSchema(schema) });
      const migrate = await runCli(['migrate'], env);
      expect(migrate.code).to.equal(1);
      expect(migrate.stderr).to.match(/^error: event store \(postgres\): /).and.match(AHEAD);
      const refused = await startFails(env);
      expect(refused).to.match(/jobs exited with 1 before it was ready/).and.match(AHEAD);
    });
  });

  describe('on SQLite (DATA_DIR)', () => {
    it('tock migrate brings a new data directory to the latest version; a service refuses a file a newer Tock migrated', async () => {
      const dir = join(dataDir, 'sqlite');
      const env = await distributedEnv(dir, { NATS_URL: '' });
      const first = await runCli(['migrate'], env);
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout.split('\n').filter(Boolean)).to.deep.equal([`event store: sqlite (${dir}/events.db): version 0 -> 1`, `logs read model: sqlite (${dir}/logs.db): version 0 -> 2`]);
      const db = new Database(join(dir, 'events.db'));
      db.prepare("INSERT INTO tock_schema_version (component, version, name) VALUES ('events', 7, 'from a newer Tock')").run();
      db.close();
      const refused = await startFails(env);
      expect(refused).to.match(/^jobs exited with 1 before it was ready:\nevent store \(sqlite\): /m).and.match(AHEAD);
    });
  });
});
