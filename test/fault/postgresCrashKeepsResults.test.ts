import { expect } from 'chai';
import { openPostgresLogsView } from '../../services/logs/postgresLogsView.ts';
import { privatePostgresMissing, startPrivatePostgres } from '../support/privatePostgres.ts';
import { waitFor } from '../support/waitFor.ts';
import { T0, execution } from '../unit/logs/executions.ts';

/**
 * What the logs service acknowledges to NATS is a committed row, and a committed row survives a
 * crash of PostgreSQL (stop -m immediate) as it does in production. The chaos run crashes the
 * server of test/support/privatePostgres.ts under load: a result acked and then gone after the
 * restart (the server answered COMMIT before writing its WAL) read as a result missing from
 * cron_logs, a fault of Tock's that was not there.
 */
describe('the PostgreSQL logs view keeps every result it acknowledged through a crash of the server', function () {
  this.timeout(120_000);

  it('records one result after another, the server dies, and every acknowledged one is there after the restart', async function () {
    const missing = privatePostgresMissing();
    if (missing) {
      if (process.env.CI) throw new Error(`cannot run under CI: ${missing}`);
      console.log(`      (skipped: ${missing})`);
      this.skip();
    }
    const postgres = await startPrivatePostgres();
    const url = `${postgres.url}?schema=crash_logs`;
    let view = openPostgresLogsView(url);
    try {
      const acknowledged: string[] = [];
      let stopped = false;
      // One transaction each, as the logs service writes a batch: its answer is the ack to NATS.
      const writer = (async () => {
        for (let i = 0; !stopped && i < 900; i++) {
          const runId = `1:${i}`;
          try {
            await view.recordMany([{ execution: execution({ runId, time: T0 + BigInt(i) }) }]);
          } catch {
            return;
          }
          acknowledged.push(runId);
        }
      })();
      await waitFor(() => acknowledged.length >= 300, 'results recorded', 60_000);
      postgres.stop('immediate');
      stopped = true;
      await writer;
      await view.close().catch(() => undefined);
      postgres.start();
      view = openPostgresLogsView(url);
      const kept = new Set((await view.query({ accountId: 1n, jobId: 1n, limit: 1000 })).map((e) => e.execution.runId));
      expect(acknowledged.filter((id) => !kept.has(id)), 'acknowledged, then lost in the crash').to.deep.equal([]);
    } finally {
      await view.close().catch(() => undefined);
      postgres.destroy();
    }
  });
});
