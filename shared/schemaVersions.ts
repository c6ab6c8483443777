/**
 * Versioned schemas. Each part of Tock's data kept in tables (the event store, the logs read
 * model) has an ordered list of migrations, and its database records the ones applied in a table
 * `tock_schema_version` (component, version, name, applied_at), one row per migration. A process
 * applies what it knows and the database lacks, and refuses a database whose version is past the
 * last one it knows: a rolled-back image must not write to tables a newer one has reshaped.
 *
 * The adapters run their migrations (shared/postgres.ts and shared/sqlite.ts hold the runners);
 * this module holds what both dialects share: the list's shape, the plan, the refusal.
 */
import { AppError } from './errors.ts';

export interface Migration<Sql> {
  /** 1, 2, 3...: in order, none skipped. */
  version: number;
  /** A few words on what it changes, recorded beside its version. */
  name: string;
  sql: Sql;
}

export interface SchemaPlan<Sql> {
  /** The part of the data (`events`, `logs`): its rows in the version table, so parts may share a schema or a file. */
  component: string;
  /** For messages: `event store (postgres)`. */
  what: string;
  /**
   * A table the code before schema versions created. Found in a database with no version recorded,
   * it marks tables made by that code: migration 1 (written to be repeatable: IF NOT EXISTS, OR
   * REPLACE) runs over them, changing no table, and version 1 is recorded.
   */
  markerTable: string;
  migrations: readonly Migration<Sql>[];
  /**
   * Definitions that belong to the code, not to a version (PostgreSQL functions): declared again
   * (CREATE OR REPLACE) after the migrations on every run, as the code before versions did at
   * every start. A function that needs a new table or column comes with the migration making it.
   */
  definitions?: Sql;
}

export interface MigrationResult {
  component: string;
  /** The version found (0: none recorded). */
  from: number;
  /** The version left. */
  to: number;
  /** Tables made before schema versions were found and recorded as version 1. */
  adopted: boolean;
}

/** A database migrated by a newer Tock than this one. */
export class SchemaAheadError extends AppError {
  constructor(
    readonly what: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      'INTERNAL',
      `${what}: the database's schema is at version ${found}, newer than this Tock's schema version ${known}: ` +
        `refusing to use it (a newer Tock has migrated it; run that version or a later one)`,
    );
    this.name = 'SchemaAheadError';
  }
}

/** The last version of a list, after checking it runs 1..n in order (a wrong list is a bug, not a state). */
export function latestVersion(migrations: readonly Migration<unknown>[]): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name}: version ${m.version} at place ${i + 1} (versions run 1, 2, 3... in order)`);
  });
  return migrations.length;
}

/** What a database at `current` must apply, in order; throws SchemaAheadError when it is past the list. */
export function pendingMigrations<Sql>(plan: SchemaPlan<Sql>, current: number): Migration<Sql>[] {
  const latest = latestVersion(plan.migrations);
  if (current > latest) throw new SchemaAheadError(plan.what, current, latest);
  return plan.migrations.slice(current);
}

/** One line for a person: `version 0 -> 1 (...)`. */
export function describeMigration(result: MigrationResult): string {
  const change = result.from === result.to ? `version ${result.to}, up to date` : `version ${result.from} -> ${result.to}`;
  return result.adopted ? `${change} (tables made before schema versions recorded as version 1)` : change;
}
