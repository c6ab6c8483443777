import { expect } from 'chai';
import { fails, ok, type ApiClient } from '../../support/api.ts';
import { embeddedTarget, storeMark, type ApiTarget } from '../../support/targets.ts';

/**
 * Two accounts: one never sees, changes or learns the existence of the other's jobs or groups.
 * A foreign id answers exactly like an id that does not exist (code 5, same message shape).
 */
describe('isolation between accounts (embedded mode)', function () {
  this.timeout(60_000);
  let target: ApiTarget;
  let alice: ApiClient;
  let bob: ApiClient;
  let job: any;
  let group: any;
  let grouped: any;
  let bobJob: any;

  before(async () => {
    target = await embeddedTarget();
    alice = await target.newAccount({ name: 'alice' });
    bob = await target.newAccount({ name: 'bob' });
    group = await ok(alice.call('group_add', { name: 'Shared Name' }));
    job = await ok(alice.call('cron_add', { url: 'https://alice.example.com/secret', name: 'alice job', expression: '0 0 1 1 *' }));
    grouped = await ok(alice.call('cron_add', { url: 'https://alice.example.com/g', group: group.id, expression: '0 0 1 1 *' }));
    bobJob = await ok(bob.call('cron_add', { url: 'https://bob.example.com/own', name: 'bob job', expression: '0 0 1 1 *' }));
  });
  after(() => target.stop());

  /** Bob's call on Alice's object fails with 5, says nothing more than for a missing id, and stores nothing. */
  const foreign = async (fn: string, params: Record<string, unknown>, foreignId: number, missingParams: Record<string, unknown>, missingId: number) => {
    const before = storeMark(target.dataDir);
    const message = await fails(bob.call(fn, params), 5);
    expect(storeMark(target.dataDir), `${fn} stored nothing`).to.deep.equal(before);
    const missing = await fails(bob.call(fn, missingParams), 5);
    expect(message.replaceAll(String(foreignId), 'N'), fn).to.equal(missing.replaceAll(String(missingId), 'N'));
  };

  const MISSING = 99_999_999;

  for (const fn of ['cron_get', 'cron_edit', 'cron_enable', 'cron_disable', 'cron_pause', 'cron_delete', 'cron_run', 'cron_history', 'cron_rollback', 'cron_logs', 'cron_show', 'cron_failures', 'cron_next', 'cron_badge', 'cron_badge_revoke']) {
    it(`${fn} on another account's job is 5, like a missing one`, async () => {
      const extra = fn === 'cron_edit' ? { name: 'hijacked' } : fn === 'cron_pause' ? { for: '1 hour' } : fn === 'cron_rollback' ? { version: 1 } : {};
      await foreign(fn, { id: job.id, ...extra }, job.id, { id: MISSING, ...extra }, MISSING);
    });
  }

  for (const fn of ['cron_batch_edit', 'cron_batch_delete']) {
    it(`${fn} with one foreign id among own ids is 5 and changes nothing`, async () => {
      await foreign(fn, { id: [bobJob.id, job.id], name: 'x' }, job.id, { id: [bobJob.id, MISSING], name: 'x' }, MISSING);
      expect((await ok(bob.call('cron_get', { id: bobJob.id }))).name).to.equal('bob job');
    });
  }

  for (const fn of ['group_get', 'group_edit', 'group_delete', 'group_vanish', 'group_empty', 'group_items', 'cron_group_edit']) {
    it(`${fn} on another account's group is 5, like a missing one`, async () => {
      const extra = fn === 'group_edit' ? { name: 'taken' } : fn === 'cron_group_edit' ? { name: 'taken' } : {};
      await foreign(fn, { id: group.id, ...extra }, group.id, { id: MISSING, ...extra }, MISSING);
    });
  }

  it("cron_add and cron_edit cannot put a job into another account's group", async () => {
    await foreign('cron_add', { url: 'https://bob.example.com/x', group: group.id }, group.id, { url: 'https://bob.example.com/x', group: MISSING }, MISSING);
    await foreign('cron_edit', { id: bobJob.id, group: group.id }, group.id, { id: bobJob.id, group: MISSING }, MISSING);
    await foreign('cron_batch_add', { data: [{ url: 'https://bob.example.com/y', group: group.id }] }, group.id, { data: [{ url: 'https://bob.example.com/y', group: MISSING }] }, MISSING);
  });

  it('lists never include the other account\'s jobs or groups; keyword and lookup find nothing', async () => {
    expect((await ok<any[]>(bob.call('cron_list'))).map((j) => j.id)).to.deep.equal([bobJob.id]);
    expect(await ok(bob.call('cron_list', { keyword: 'alice' }))).to.deep.equal([]);
    expect(await ok(bob.call('cron_list', { keyword: String(job.id) }))).to.deep.equal([]);
    expect(await ok(bob.call('group_list'))).to.deep.equal([]);
    await fails(bob.call('group_lookup', { name: 'Shared Name' }), 5);
    // Bob may use the same group name: names are per account.
    const own = await ok(bob.call('group_add', { name: 'Shared Name' }));
    expect(await ok(bob.call('group_lookup', { name: 'Shared Name' }))).to.deep.equal(own);
    expect(await ok(alice.call('group_lookup', { name: 'Shared Name' }))).to.deep.equal({ ...group, jobCount: 1 });
  });

  it("leaves Alice's objects exactly as they were", async () => {
    expect(await ok(alice.call('cron_get', { id: job.id }))).to.deep.equal(job);
    expect(await ok(alice.call('cron_get', { id: grouped.id }))).to.deep.equal(grouped);
    expect(await ok(alice.call('group_get', { id: group.id }))).to.deep.equal({ ...group, jobCount: 1 });
    expect((await ok<any[]>(alice.call('cron_list'))).map((j) => j.id)).to.deep.equal([job.id, grouped.id]);
    expect((await ok<any[]>(alice.call('cron_history', { id: job.id }))).map((h) => h.type)).to.deep.equal(['JobCreated']);
  });

  it('account_get and account_edit act on the caller\'s own account only', async () => {
    const a = await ok(alice.call('account_get'));
    const b = await ok(bob.call('account_get', { id: a.id }));
    expect(b.name).to.equal('bob');
    await ok(bob.call('account_edit', { id: a.id, timezone: 'Europe/Rome' }));
    expect((await ok(alice.call('account_get'))).timezone).to.equal('UTC');
    expect((await ok(bob.call('account_get'))).timezone).to.equal('Europe/Rome');
  });
});
