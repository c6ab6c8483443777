/**
 * What the PostgreSQL adapters (event store, logs read model) share: one way to turn a URL into a
 * pool, one schema name rule, one translation of driver failures into the project's error type,
 * one migration runner.
 */
import pg from 'pg';
import { AppError } from './errors.ts';
import { pendingMigrations, type MigrationResult, type SchemaPlan } from './schemaVersions.ts';

export interface PostgresTarget {
  /** The connection string handed to node-postgres, without Tock's own `schema` parameter. */
  connectionString: string;
  /** The schema Tock's tables live in, already quoted for SQL. */
  schema: string;
  /** The schema name as given (unquoted), for messages and channel names. */
  schemaName: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Reads a `postgres://` URL. A `schema` query parameter (or the `schema` option) picks the schema
 * Tock's tables go in, so several installations can share one database; default `fallbackSchema`.
 */
export function postgresTarget(url: string, fallbackSchema: string, schema?: string): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError('INVALID_PARAMETER', 'postgres: the URL is not a valid postgres://user:password@host:port/database URL');
  }
  const name = schema ?? parsed.searchParams.get('schema') ?? fallbackSchema;
  if (!SCHEMA_NAME.test(name)) {
    throw new AppError('INVALID_PARAMETER', `postgres: schema must be lower-case letters, digits and _ (at most 63), got ${JSON.stringify(name.slice(0, 80))}`);
  }
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema: `"${name}"`, schemaName: name };
}

/** A pool whose idle connections may die (server restart) without taking the process down. */
export function createPool(target: PostgresTarget, options: { max?: number; onIdleError?: (error: Error) => void } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.max ?? 10,
    // A request waiting for a connection to an unreachable server fails instead of hanging.
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // An idle client losing its connection emits on the pool; without a listener Node would crash.
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

/** Node socket errors and SQLSTATE classes that say "the server cannot be used now", not "the request is wrong". */
const TRANSIENT_NODE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
const TRANSIENT_SQLSTATE = [
  /^08/, // connection exception
  /^53/, // insufficient resources: too many connections, out of memory, disk full
  /^57P0[1-3]$/, // admin shutdown, crash shutdown, cannot connect now (starting up)
  /^40001$/, // serialization failure
  /^40P01$/, // deadlock detected
];

/** True when the failure is the server being away or overloaded: worth retrying later. */
export function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (TRANSIENT_NODE.has(code) || TRANSIENT_SQLSTATE.some((re) => re.test(code)))) return true;
  const message = error instanceof Error ? error.message : '';
  // node-postgres' own words when a connection cannot be had or is lost mid-query.
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
}

/** Translates a driver failure into an AppError naming `what` (UNAVAILABLE, retryable, when the server is away or busy); AppErrors pass through. */
export function translatePgError(error: unknown, what: string): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' && code ? ` (${code})` : '';
  return Object.assign(new AppError(isTransient(error) ? 'UNAVAILABLE' : 'INTERNAL', `${what} (postgres): ${message || 'failed'}${detail}`), { cause: error });
}

/**
 * Runs `step` with one connection inside a transaction that holds an advisory lock on `key`, so
 * processes starting at once create the schema one after the other (concurrent CREATE ... IF NOT
 * EXISTS can still collide in PostgreSQL's catalogs).
 */
export async function withSchemaLock(pool: pg.Pool, key: string, step: (client: pg.PoolClient) => Promise<void>) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
    await step(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** A PostgreSQL migration: its statements, for the schema the target names. */
export type PostgresPlan = SchemaPlan<(target: PostgresTarget) => string>;

/**
 * Brings `plan.component`'s tables in the target's schema to the plan's last version, in one
 * transaction under the advisory lock `lockKey`: replicas starting together take turns (the second
 * finds the work done), and a migration that fails leaves the database at the version it had. The
 * lock key is the one the code before schema versions took to create its tables, so that code and
 * this never create them at the same time either. The plan's definitions (functions) are declared
 * again after the migrations. Throws SchemaAheadError, changing nothing, when the database is past
 * the plan.
 */
export async function migratePostgres(pool: pg.Pool, target: PostgresTarget, lockKey: string, plan: PostgresPlan): Promise<MigrationResult> {
  const s = target.schema;
  let result: MigrationResult | undefined;
  await withSchemaLock(pool, lockKey, async (client) => {
    await client.query(`
      CREATE SCHEMA IF NOT EXISTS ${s};
      CREATE TABLE IF NOT EXISTS ${s}.tock_schema_version (
        component  text NOT NULL,
        version    integer NOT NULL,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (component, version)
      )`);
    const found = await client.query<{ version: number | null; marker: string | null }>(
      `SELECT (SELECT max(version) FROM ${s}.tock_schema_version WHERE component = $1) AS version, to_regclass($2)::text AS marker`,
      [plan.component, `${s}.${plan.markerTable}`],
    );
    const from = found.rows[0]?.version ?? 0;
    const adopted = from === 0 && found.rows[0]?.marker != null;
    const todo = pendingMigrations(plan, from);
    for (const m of todo) {
      await client.query(m.sql(target));
      await client.query(`INSERT INTO ${s}.tock_schema_version (component, version, name) VALUES ($1, $2, $3)`, [plan.component, m.version, m.name]);
    }
    if (plan.definitions) await client.query(plan.definitions(target));
    result = { component: plan.component, from, to: from + todo.length, adopted };
  });
  return result!;
}
