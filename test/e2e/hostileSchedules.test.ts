import { expect } from 'chai';
import { apiClient, fails, ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { hostileBatch } from '../support/jobFixtures.ts';

/**
 * One account must not be able to stall the others with costly schedules or with sheer numbers:
 * a schedule that never fires is refused, the worst accepted ones are planned, and new accounts get a job limit.
 */
describe('hostile schedules and the per-account job limit (embedded mode)', function () {
  this.timeout(240_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  before(async () => {
    system = await startTestSystem({ env: { TOCK_ACCOUNT_JOB_LIMIT: '3' } });
  });
  after(async () => {
    await system?.destroy();
  });

  it('refuses a filter that never lets a run through within a year, naming it, and stores nothing', async () => {
    const { api } = system;
    const message = await fails(api.call('cron_add', { url: 'https://example.com/never', expression: '1 second', filter: 'hour == 1 and hour == 2' }), 3);
    expect(message).to.match(/^filter: .*within a year/);
    expect(await fails(api.call('cron_add', { url: 'https://example.com/never', expression: '* * * * *', filter: 'minute > 59' }), 3)).to.match(/^filter: /);
    expect(await ok(api.call('cron_list'))).to.deep.equal([]);

    const job = await ok(api.call('cron_add', { url: 'https://example.com/leap', expression: '1 second', filter: 'month == 2 and day == 29' }));
    expect(await fails(api.call('cron_edit', { id: job.id, filter: 'day == 31 and month == 2' }), 3)).to.match(/^filter: .*within a year/);
    expect((await ok(api.call('cron_get', { id: job.id }))).filter).to.equal('month == 2 and day == 29');
    // An edit that leaves the schedule alone is not checked again.
    expect((await ok(api.call('cron_edit', { id: job.id, name: 'leap day' }))).name).to.equal('leap day');
    await ok(api.call('cron_delete', { id: job.id }));
  });

  it('adds 1000 worst-case jobs in one cron_batch_add, each planned', async () => {
    // How long the event loop is held meanwhile (between two /healthz answers) is measured by
    // `npm run bench -- batchGap`.
    const { api } = system;
    const data = hostileBatch(1000);
    const added = await ok<any[]>(api.call('cron_batch_add', { data }));
    expect(added).to.have.length(1000);
    expect(added.every((j, i) => j.url === data[i]!.url && j.nextRun > 0)).to.equal(true);
    expect(await ok<any[]>(api.call('cron_list'))).to.have.length(1000);
  });

  it('gives accounts created without a limit the configured default (error 7 beyond it); 0 is no limit', async () => {
    const { account, token } = await system.adminClient.createAccount({ name: 'limited', timezone: 'UTC' });
    expect(account!.jobLimit).to.equal(3);
    const limited = apiClient(system.baseUrl, token);
    expect((await ok(limited.call('account_get'))).cron).to.equal(3);
    await ok(limited.call('cron_batch_add', { data: [1, 2].map((n) => ({ url: `https://example.com/l${n}` })) }));
    await ok(limited.call('cron_add', { url: 'https://example.com/l3' }));
    expect(await fails(limited.call('cron_add', { url: 'https://example.com/l4' }), 7)).to.match(/at most 3 cron jobs/);
    expect(await ok<any[]>(limited.call('cron_list'))).to.have.length(3);

    const free = await system.adminClient.createAccount({ name: 'unlimited', timezone: 'UTC', jobLimit: 0 });
    expect(free.account!.jobLimit).to.equal(0);
    const unlimited = apiClient(system.baseUrl, free.token);
    await ok(unlimited.call('cron_batch_add', { data: [1, 2, 3, 4].map((n) => ({ url: `https://example.com/u${n}` })) }));
  });
});
