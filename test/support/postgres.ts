/**
 * The PostgreSQL the tests use: TOCK_TEST_POSTGRES_URL, default the local server as `postgres`
 * (what .ci/run installs or finds). Every test works in a schema of its own, dropped afterwards, so
 * runs sharing one database never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL = process.env.TOCK_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<string | undefined> | undefined;

/** undefined when the server answers; else why not. */
function probe(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/**
 * For a `before` hook: skips the suite, saying why, when no PostgreSQL answers, except under CI
 * (CI=true), where a missing server is a failure: .ci/run is supposed to have started one.
 */
export async function requirePostgres(this: Mocha.Context) {
  const why = await probe();
  if (why === undefined) return;
  if (process.env.CI) throw new Error(`PostgreSQL at ${redact(POSTGRES_URL)} is not reachable under CI: ${why}`);
  console.log(`skipped: no PostgreSQL at ${redact(POSTGRES_URL)} (${why}); set TOCK_TEST_POSTGRES_URL or run .ci/run`);
  this.skip();
}

const redact = (url: string) => url.replace(/\/\/[^@/]*@/, '//');

/** A fresh schema name for one test. */
export const schemaName = (prefix = 'tock_test') => `${prefix}_${randomBytes(5).toString('hex')}`;

/** POSTGRES_URL with `?schema=` set, as EVENTSTORE_URL / LOGS_DB_URL would carry it. */
export function urlWithSchema(schema: string, base = POSTGRES_URL): string {
  const url = new URL(base);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Drops the schema and everything in it. */
export async function dropSchema(schema: string) {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Runs one statement as the test's own connection (to hold a transaction open, inspect tables). */
export async function rawClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  return client;
}
