import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../../shared/clock.ts';
import { AppError } from '../../../shared/errors.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { AdminService, JobsService } from '../../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient } from '../../../shared/grpc/bridge.ts';
import { createLogger } from '../../../shared/log.ts';
import { createReadiness } from '../../../shared/readiness.ts';
import { startJobsService } from '../../../services/jobs/service.ts';
import { grpcHealthClient } from '../../support/health.ts';
import { waitFor } from '../../support/waitFor.ts';

/**
 * The jobs view's subscription meets an event it cannot read (a row another process wrote
 * broken): the service must say NOT_SERVING over grpc.health.v1 and answer UNAVAILABLE at once,
 * then resume by itself from where it stopped once the row is readable.
 */
describe('jobs service: supervised view and gRPC health', function () {
  this.timeout(30_000);
  const dir = mkdtempSync(join(tmpdir(), 'tock-health-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('goes NOT_SERVING and fails fast while its subscription cannot read the store, then resumes by itself', async () => {
    const file = join(dir, 'events.db');
    const store = openSqliteEventStore(file);
    const readiness = createReadiness();
    const server = await startJobsService({ store, readiness, clock: systemClock, log: createLogger('jobs', {}, 'silent'), address: '127.0.0.1:0', admin: { address: '127.0.0.1:0', credentials: {} } });
    const health = grpcHealthClient(server.addresses.grpc);
    const jobs = createClient(AdminService, server.addresses.admin, {});
    const raw = new Database(file);
    try {
      expect(await health.serving()).to.equal(true);
      expect(await health.serving(JobsService.typeName)).to.equal(true);
      await jobs.createAccount({ name: 'before', timezone: 'UTC', jobLimit: 0 });

      // Another process appends an event whose data is not JSON: the subscription fails on it.
      raw
        .prepare('INSERT INTO events (id, stream, revision, category, type, data, metadata, time) VALUES (?, ?, 0, ?, ?, ?, ?, ?)')
        .run('broken-1', 'other-1', 'other', 'Noise', '{', '{}', Date.now());
      await waitFor(async () => !(await health.serving()), 'NOT_SERVING', 10_000);
      // Lost first; on a slow machine the poll may see the restart that failed on the same row.
      expect(readiness.failing()).to.have.property('jobs view').that.matches(/^(lost|cannot start): /);
      expect(await health.serving('liveness'), 'alive all along').to.equal(true);
      const began = Date.now();
      const error = await jobs.listAccounts({}).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).kind).to.equal('UNAVAILABLE');
      expect(Date.now() - began, 'fails fast').to.be.below(2000);

      // Fixed (or the store is back): the view resumes after its last event, on its own.
      raw.prepare("UPDATE events SET data = '{}' WHERE id = 'broken-1'").run();
      await waitFor(() => health.serving(), 'SERVING again', 10_000);
      await jobs.createAccount({ name: 'after', timezone: 'UTC', jobLimit: 0 });
      const { accounts } = await jobs.listAccounts({});
      expect(accounts.map((a) => a.name), 'every event applied once').to.deep.equal(['before', 'after']);
    } finally {
      raw.close();
      health.close();
      jobs.close();
      await server.stop();
      await store.close();
    }
  });
});
