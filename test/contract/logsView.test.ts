/**
 * Runs the LogsView contract against each adapter: SQLite (in memory, and files for the tests
 * that open one store twice) and PostgreSQL (a schema per store, dropped afterwards).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresLogsView } from '../../services/logs/postgresLogsView.ts';
import { openSqliteLogsView } from '../../services/logs/sqliteLogsView.ts';
import { dropSchema, POSTGRES_URL, requirePostgres, schemaName } from '../support/postgres.ts';
import { expect } from 'chai';
import { logsViewContract } from './logsViewContract.ts';

logsViewContract('sqlite', () => {
  let dir: string | undefined;
  return {
    propertyRuns: 300,
    async open(options, place) {
      if (place === undefined) return openSqliteLogsView(':memory:', options);
      dir ??= mkdtempSync(join(tmpdir(), 'tock-logs-'));
      return openSqliteLogsView(join(dir, `${place}.db`), options);
    },
    async cleanup() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('PostgreSQL', function () {
  before(requirePostgres);
  logsViewContract('postgres', () => {
    const prefix = schemaName('tock_logs_test');
    const schemas = new Set<string>();
    let fresh = 0;
    return {
      // Each run creates a schema: fewer runs than SQLite, the same generators.
      propertyRuns: 30,
      async open(options, place) {
        const schema = `${prefix}_${place ?? `f${fresh++}`}`;
        schemas.add(schema);
        const view = openPostgresLogsView(POSTGRES_URL, { ...options, schema });
        await view.size(); // creates the schema now, so a bad setting fails here as it does for SQLite
        return view;
      },
      async cleanup() {
        for (const schema of schemas) await dropSchema(schema);
      },
    };
  });
});

describe('PostgreSQL logs read model shared by several replicas', function () {
  this.timeout(60_000);
  before(requirePostgres);
  const schema = schemaName('tock_logs_test');
  after(() => dropSchema(schema));

  it('records each execution once when replicas write overlapping batches at once, and prunes to the setting', async () => {
    const { execution } = await import('../unit/logs/executions.ts');
    const replicas = [0, 1, 2].map(() => openPostgresLogsView(POSTGRES_URL, { schema, keepPerJob: 30 }));
    try {
      // Redeliveries: every replica gets the same 200 executions of 4 jobs, in batches of its own size.
      const executions = Array.from({ length: 200 }, (_, i) => execution({ runId: `run-${i}`, jobId: BigInt(1 + (i % 4)), time: 1_729_067_400n + BigInt(i) }));
      const fresh = await Promise.all(
        replicas.map(async (view, r) => {
          const flags: boolean[] = [];
          for (let i = 0; i < executions.length; i += 7 + r * 5) {
            flags.push(...(await view.recordMany(executions.slice(i, i + 7 + r * 5).map((e) => ({ execution: e })))));
          }
          return flags;
        }),
      );
      expect(await replicas[0]!.size()).to.deep.equal({ log: 120, failures: 0 }); // 4 jobs x 30
      // Duplicates are told by the run ids the view holds: a replica that comes to an execution
      // after the others have pruned it (30 newer ones of its job written meanwhile) writes it
      // again and prunes it at once, so only an execution that is not kept may read as new twice.
      const kept = new Set((await replicas[0]!.query({ accountId: 1n, limit: 1000 })).map((e) => e.execution.runId));
      for (let i = 0; i < executions.length; i++) {
        const times = fresh.filter((flags) => flags[i]).length;
        expect(times === 1 || (times > 1 && !kept.has(`run-${i}`)), `run-${i} new ${times} times`).to.equal(true);
      }
      const newest = await replicas[1]!.query({ accountId: 1n, jobId: 1n, limit: 1000 });
      expect(newest.map((e) => e.execution.runId)).to.deep.equal(Array.from({ length: 30 }, (_, k) => `run-${196 - 4 * k}`));
      expect(new Set((await replicas[2]!.query({ accountId: 1n, limit: 1000 })).map((e) => e.id)).size).to.equal(120);
    } finally {
      await Promise.all(replicas.map((v) => v.close()));
    }
  });
});
