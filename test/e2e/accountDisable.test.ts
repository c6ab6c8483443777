import { expect } from 'chai';
import { accountsCommand } from '../../services/cli/accountsCommand.ts';
import { FakeClock } from '../../shared/clock.ts';
import { apiClient, fails, ok } from '../support/api.ts';
import { drive } from '../support/drive.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/** How far ahead of their time runs go on the bus: a disable must cancel those too. */
const LEAD_MS = 1500;

/**
 * `tock account disable` stops the account's jobs, not only its token; `enable` starts them from
 * the next occurrence. On a fake clock: which occurrences run is the planner's and the executor's
 * logic, exact to the millisecond here, with nothing waited out in real time.
 */
describe("a disabled account's jobs do not run (embedded mode, real target, operator calls over gRPC)", function () {
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  // Off the whole second, so no occurrence falls on the instant of a disable or an enable.
  const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000 + 250);
  const scheduledMs = (path: string) => target.received.filter((r) => r.url === path).map((r) => Number(r.headers['x-tock-scheduled-time']) * 1000);

  before(async () => {
    target = await startTarget();
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_DISPATCH_LEAD_MS: String(LEAD_MS) }, clock });
  });
  after(async () => {
    await system.destroy();
    await target.close();
  });

  it('no run while disabled (cron_next shows none, the token is refused); after enable it runs again, the disabled time not caught up', async () => {
    const jobs = system.adminClient;
    const { account, token } = await jobs.createAccount({ name: 'paused-customer', timezone: 'UTC', jobLimit: 0 });
    const accountId = account!.id;
    const api = apiClient(system.baseUrl, token);
    const other: any = await ok(system.api.call('cron_add', { url: `${target.url}/other`, expression: '* * * * * *' }));
    const job: any = await ok(api.call('cron_add', { url: `${target.url}/acct`, expression: '* * * * * *' }));
    await drive(clock, () => scheduledMs('/acct').length >= 2, 'runs before the disable');

    await jobs.disableAccount({ id: accountId });
    const disabledAt = clock.now();
    await fails(api.call('cron_list'), 11, 401);
    // The planner has applied the disable (and told the executors) before the clock moves on.
    await waitFor(async () => (await system.clients.planner.nextRuns({ accountId, id: BigInt(job.id), limit: 5 })).times.length === 0, 'cron_next to show no run');
    const otherBefore = scheduledMs('/other').length;
    // Past every run already on the bus ahead of its time, and a second more: the other account's
    // run of that second has arrived, so this account's would have too.
    const quietUntil = disabledAt + LEAD_MS + 2000;
    await drive(clock, () => scheduledMs('/other').some((t) => t > quietUntil), 'the other account to run past the disabled stretch');
    // Runs put on the bus ahead of time are cancelled too: nothing scheduled after the disable is called.
    expect(scheduledMs('/acct').filter((t) => t > disabledAt), 'runs while disabled').to.deep.equal([]);
    expect(scheduledMs('/other').length, 'another account goes on').to.be.greaterThan(otherBefore + 1);

    await jobs.enableAccount({ id: accountId });
    const enabledAt = clock.now();
    await drive(clock, () => scheduledMs('/acct').some((t) => t > enabledAt), 'a run after the enable');
    expect(scheduledMs('/acct').filter((t) => t > disabledAt && t < enabledAt), 'the disabled time caught up').to.deep.equal([]);
    expect(scheduledMs('/acct').filter((t) => t > enabledAt), 'from the next occurrence on').to.deep.equal([Math.ceil(enabledAt / 1000) * 1000]);
    expect((await system.clients.planner.nextRuns({ accountId, id: BigInt(job.id), limit: 2 })).times).to.have.length(2);
    expect(await ok(api.call('account_get'))).to.include({ id: Number(accountId) });
    await ok(system.api.call('cron_delete', { id: other.id }));
  });

  it("the operator lists an account's jobs (secrets masked) and deletes them all", async () => {
    const { account, token } = await system.adminClient.createAccount({ name: 'to-clean', timezone: 'UTC', jobLimit: 0 });
    const api = apiClient(system.baseUrl, token);
    await ok(api.call('cron_add', { url: 'http://bob:Hidden-77@127.0.0.1:9/a', expression: 'manual', name: 'first' }));
    await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/b', expression: 'manual', name: 'second' }));
    const lines: string[] = [];
    // The CLI as an operator runs it next to a running Tock: straight on DATA_DIR's store (and key).
    const io = { out: (l: string) => void lines.push(l), err: (l: string) => void lines.push(l), env: { DATA_DIR: system.dataDir, ADMIN_ADDR: '', LOG_LEVEL: 'warn' } };
    expect(await accountsCommand(['jobs', String(account!.id)], io)).to.equal(0);
    expect(lines).to.have.length(3);
    expect(lines.join('\n')).to.include('first').and.include('http://***@127.0.0.1:9/a').and.not.include('Hidden-77');
    expect(await accountsCommand(['delete-jobs', String(account!.id)], io)).to.equal(0);
    expect(lines.at(-1)).to.equal(`account ${account!.id}: 2 cron job(s) deleted`);
    await waitFor(async () => (await ok<unknown[]>(api.call('cron_list'))).length === 0, 'the running system to see the deletes', 5000);
    expect(await accountsCommand(['enable'], io).catch((e: Error) => e.message)).to.match(/account/);
  });
});
