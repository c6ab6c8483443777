import { expect } from 'chai';
import { startGatewayService } from '../../services/gateway/service.ts';
import { startJobsService } from '../../services/jobs/service.ts';
import { systemClock } from '../../shared/clock.ts';
import { openPostgresEventStore } from '../../shared/eventStore/postgresEventStore.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { AdminService, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { apiClient, type ApiClient } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { YEARLY } from '../support/jobFixtures.ts';
import type { AdminClient } from '../support/targets.ts';
import { dropSchema, POSTGRES_URL, requirePostgres, schemaName } from '../support/postgres.ts';

const job = (n: number) => ({ url: `https://example.com/limit/${n}`, name: `limit ${n}`, expression: YEARLY });

/**
 * 50 requests at once, half cron_add and half cron_batch_add of 2, spread over `apis` (one per
 * jobs replica): the account ends with exactly `limit` jobs, and every refusal is the usual
 * over-limit envelope.
 */
async function overrun(apis: ApiClient[], limit: number, list: () => Promise<number>) {
  const calls = Array.from({ length: 50 }, (_, i) => {
    const api = apis[i % apis.length]!;
    return i % 2 ? api.call('cron_add', job(i)) : api.call('cron_batch_add', { data: [job(i * 100), job(i * 100 + 1)] });
  });
  const answers = await Promise.all(calls);
  const refused = answers.filter((a) => a.status !== 'success');
  const created = answers.filter((a) => a.status === 'success').reduce((n, a) => n + (Array.isArray(a.data) ? a.data.length : 1), 0);
  expect(created, 'jobs the answers say were created').to.equal(limit);
  expect(await list(), 'jobs the account holds').to.equal(limit);
  expect(refused.length).to.be.greaterThan(0);
  const { http: _, headers: __, ...sample } = refused.find((a) => a.http === 200) ?? refused[0]!;
  expect(sample).to.deep.equal({ status: 'error', code: sample.code, message: `the account may have at most ${limit} cron jobs` });
  for (const a of refused) expect({ status: a.status, code: a.code, message: a.message }).to.deep.equal({ status: 'error', code: sample.code, message: sample.message });
}

describe('the per-account job limit under concurrent requests', function () {
  this.timeout(120_000);
  const log = createLogger('test', {}, 'silent');

  describe('two jobs replicas on PostgreSQL (each its own store connection, view and gateway)', () => {
    const schema = schemaName('tock_limit');
    const stores: EventStore[] = [];
    const stops: Array<() => Promise<void>> = [];
    const apis: ApiClient[] = [];
    let admin: AdminClient;
    before(requirePostgres);
    before(async () => {
      const credentials = loopbackCredentials();
      for (let n = 0; n < 2; n++) {
        const store = openPostgresEventStore(POSTGRES_URL, { schema });
        stores.push(store);
        const jobs = await startJobsService({
          store,
          clock: systemClock,
          log,
          address: '127.0.0.1:0',
          credentials: credentials.service,
          admin: { address: '127.0.0.1:0', credentials: credentials.admin },
        });
        const gateway = await startGatewayService({ clients: { jobs: createClient(JobsService, jobs.addresses.grpc, credentials.service) }, rateLimit: { rate: 0, burst: 0 }, log, host: '127.0.0.1', port: 0 });
        stops.push(() => gateway.stop(), () => jobs.stop());
        admin ??= createClient(AdminService, jobs.addresses.admin, credentials.admin);
        apis.push(apiClient(`http://${gateway.addresses.http}`, ''));
      }
    });
    after(async () => {
      for (const stop of stops) await stop();
      for (const store of stores) await store.close();
      await dropSchema(schema);
    });

    for (const limit of [3, 8]) {
      it(`limit ${limit}: 50 concurrent cron_add and cron_batch_add make exactly ${limit} jobs`, async () => {
        const { token } = await admin.createAccount({ name: `limit ${limit}`, timezone: 'UTC', jobLimit: limit });
        const mine = apis.map((a) => apiClient(a.baseUrl, token));
        const list = async () => {
          // Each replica's view, once caught up, holds the same jobs.
          const counts = await Promise.all(mine.map(async (api) => ((await api.call('cron_list')).data as unknown[]).length));
          expect(counts[0], 'both replicas agree').to.equal(counts[1]);
          return counts[0]!;
        };
        await overrun(mine, limit, list);
      });
    }

    it('a deletion gives its slot back, once, on whichever replica', async () => {
      const { token } = await admin.createAccount({ name: 'limit release', timezone: 'UTC', jobLimit: 2 });
      const [a, b] = apis.map((api) => apiClient(api.baseUrl, token));
      const [first] = (await a!.call('cron_batch_add', { data: [job(1), job(2)] })).data as Array<{ id: number }>;
      expect((await b!.call('cron_add', job(3))).status).to.equal('error');
      await Promise.all([a!.call('cron_delete', { id: first!.id }), b!.call('cron_delete', { id: first!.id })]);
      const again = await Promise.all([a!.call('cron_add', job(4)), b!.call('cron_add', job(5))]);
      expect(again.filter((r) => r.status === 'success'), 'one slot came back, not two').to.have.length(1);
    });
  });

  describe('embedded mode', () => {
    let system: Awaited<ReturnType<typeof startTestSystem>>;
    before(async () => {
      system = await startTestSystem();
    });
    after(() => system.destroy());

    it('limit 4: 50 concurrent cron_add and cron_batch_add make exactly 4 jobs', async () => {
      const { token } = await system.adminClient.createAccount({ name: 'limit 4', timezone: 'UTC', jobLimit: 4 });
      const api = apiClient(system.baseUrl, token);
      await overrun([api], 4, async () => ((await api.call('cron_list')).data as unknown[]).length);
    });
  });
});
