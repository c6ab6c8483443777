import { expect } from 'chai';
import { apiClient, fails, ok, type ApiClient } from '../../support/api.ts';
import { inBothModes } from '../../support/targets.ts';

const YEARLY = '0 0 1 1 *';

inBothModes('group and account functions with valid input', (target) => {
  let api: ApiClient;
  beforeEach(async () => {
    // Group lists are per account: a fresh account per test keeps them exact.
    api = await target().newAccount();
  });

  const addJobs = (group: number | null, n: number) =>
    ok<any[]>(api.call('cron_batch_add', { data: Array.from({ length: n }, (_, i) => ({ url: `https://example.com/${group}/${i}`, group, expression: YEARLY })) }));

  it('group_add, group_get, group_list, group_lookup: FC\'s record {id, name, jobCount, priority}', async () => {
    const a = await ok(api.call('group_add', { name: '  Backups ' }));
    expect(a).to.deep.equal({ id: a.id, name: 'Backups', jobCount: 0, priority: 0 });
    const b = await ok(api.call('group_add', { name: 'Reports', priority: 3 }));
    expect(b).to.include({ name: 'Reports', priority: 3, jobCount: 0 });
    expect(b.id).to.be.greaterThan(a.id);
    await addJobs(a.id, 2);
    const aNow = { ...a, jobCount: 2 };
    expect(await ok(api.call('group_get', { id: a.id }))).to.deep.equal(aNow);
    expect(await ok(api.call('group_list'))).to.deep.equal([aNow, b]);
    expect(await ok(api.call('group_lookup', { name: 'Reports' }))).to.deep.equal(b);
    expect(await fails(api.call('group_lookup', { name: 'reports' }), 5)).to.contain('reports');
  });

  it('group_edit changes only what is supplied', async () => {
    const g = await ok(api.call('group_add', { name: 'old', priority: 2 }));
    expect(await ok(api.call('group_edit', { id: g.id, name: 'new' }))).to.deep.equal({ ...g, name: 'new' });
    expect(await ok(api.call('group_edit', { id: g.id, priority: 9 }))).to.deep.equal({ ...g, name: 'new', priority: 9 });
    expect(await ok(api.call('group_edit', { id: g.id }))).to.deep.equal({ ...g, name: 'new', priority: 9 });
  });

  it('group_items lists the group\'s jobs only, paged', async () => {
    const g = await ok(api.call('group_add', { name: 'items' }));
    const members = await addJobs(g.id, 3);
    await addJobs(null, 2);
    expect(await ok(api.call('group_items', { id: g.id }))).to.deep.equal(members);
    expect((await ok<any[]>(api.call('group_items', { id: g.id, page: 2, limit: 2 }))).map((j) => j.id)).to.deep.equal([members[2].id]);
  });

  it('group_delete removes the group and ungroups its jobs', async () => {
    const g = await ok(api.call('group_add', { name: 'to delete' }));
    const members = await addJobs(g.id, 2);
    expect(await ok(api.call('group_delete', { id: g.id }))).to.deep.equal({ ...g, id: null, jobCount: 2 });
    await fails(api.call('group_get', { id: g.id }), 5);
    await fails(api.call('group_delete', { id: g.id }), 5);
    for (const job of members) expect((await ok(api.call('cron_get', { id: job.id }))).group).to.equal(null);
    expect(await ok(api.call('group_list'))).to.deep.equal([]);
  });

  it('group_vanish removes the group and its jobs', async () => {
    const g = await ok(api.call('group_add', { name: 'to vanish' }));
    const members = await addJobs(g.id, 2);
    const other = (await addJobs(null, 1))[0];
    expect(await ok(api.call('group_vanish', { id: g.id }))).to.deep.equal({ ...g, id: null, jobCount: 2 });
    await fails(api.call('group_get', { id: g.id }), 5);
    for (const job of members) await fails(api.call('cron_get', { id: job.id }), 5);
    expect((await ok<any[]>(api.call('cron_list'))).map((j) => j.id)).to.deep.equal([other.id]);
  });

  it('group_empty removes the jobs and keeps the group', async () => {
    const g = await ok(api.call('group_add', { name: 'to empty' }));
    const members = await addJobs(g.id, 2);
    expect(await ok(api.call('group_empty', { id: g.id }))).to.deep.equal({ ...g, jobCount: 0 });
    expect(await ok(api.call('group_get', { id: g.id }))).to.deep.equal({ ...g, jobCount: 0 });
    for (const job of members) await fails(api.call('cron_get', { id: job.id }), 5);
    expect(await ok(api.call('group_items', { id: g.id }))).to.deep.equal([]);
  });

  it('jobCount follows cron_add, cron_edit and cron_delete', async () => {
    const g = await ok(api.call('group_add', { name: 'counted' }));
    const [one] = await addJobs(g.id, 1);
    const two = await ok(api.call('cron_add', { url: 'https://example.com/two', expression: YEARLY }));
    await ok(api.call('cron_edit', { id: two.id, group: g.id }));
    expect((await ok(api.call('group_get', { id: g.id }))).jobCount).to.equal(2);
    await ok(api.call('cron_delete', { id: one.id }));
    expect((await ok(api.call('group_get', { id: g.id }))).jobCount).to.equal(1);
  });

  it('account_get answers FC\'s account record; account_edit changes the timezone', async () => {
    const own = await target().newAccount({ name: 'Acme', timezone: 'America/New_York', jobLimit: 50 });
    const account = await ok(own.call('account_get'));
    expect(account).to.deep.equal({ id: own.accountId, name: 'Acme', timezone: 'America/New_York', plan: 'self-hosted', cron: 50, expiryDate: null });
    expect(await ok(own.call('account_edit', { timezone: 'Asia/Tokyo' }))).to.deep.equal({ ...account, timezone: 'Asia/Tokyo' });
    expect(await ok(own.call('account_get', {}, { method: 'GET' }))).to.deep.equal({ ...account, timezone: 'Asia/Tokyo' });
    expect(await ok(own.call('account_edit', {}))).to.deep.equal({ ...account, timezone: 'Asia/Tokyo' });
    // New jobs take the account's timezone from now on; existing ones keep theirs.
    expect((await ok(own.call('cron_add', { url: 'https://example.com/tz' }))).timezone).to.equal('Asia/Tokyo');
  });

  it('account_token_rotate answers a new token once; the one that made the call is refused at once', async () => {
    const own = await target().newAccount({ name: 'Rotating' });
    await ok(own.call('cron_add', { url: 'https://example.com/kept', expression: YEARLY }));
    const rotated = await ok(own.call('account_token_rotate'));
    expect(rotated.token).to.match(/^[A-Za-z0-9]{32}$/);
    expect({ ...rotated, token: undefined }).to.deep.equal({ ...(await ok(apiClient(target().baseUrl, rotated.token).call('account_get'))), token: undefined });
    await fails(own.call('account_get'), 11);
    const fresh = apiClient(target().baseUrl, rotated.token);
    // The same account: its jobs are there, and no other answer shows the token.
    const jobs = await ok<any[]>(fresh.call('cron_list'));
    expect(jobs.map((j) => j.url)).to.deep.equal(['https://example.com/kept']);
    expect(JSON.stringify([jobs, await ok(fresh.call('account_get'))])).to.not.include(rotated.token);
  });

  it('account_token_rotate sent twice at once with one token: one rotation, the other refused (code 11)', async () => {
    const own = await target().newAccount();
    const answers = await Promise.all([own.call('account_token_rotate'), own.call('account_token_rotate')]);
    const won = answers.filter((a) => a.status === 'success');
    expect(won, JSON.stringify(answers.map((a) => a.code))).to.have.length(1);
    expect(answers.find((a) => a.status !== 'success')).to.include({ code: 11 });
    await ok(apiClient(target().baseUrl, won[0]!.data.token).call('account_get'));
  });

  it('a job limit on the account is error 7 beyond it', async () => {
    const small = await target().newAccount({ jobLimit: 2 });
    await ok(small.call('cron_add', { url: 'https://example.com/1' }));
    expect(await fails(small.call('cron_batch_add', { data: [{ url: 'https://example.com/2' }, { url: 'https://example.com/3' }] }), 7)).to.contain('2');
    await ok(small.call('cron_add', { url: 'https://example.com/2' }));
    await fails(small.call('cron_add', { url: 'https://example.com/3' }), 7);
    expect(await ok<any[]>(small.call('cron_list'))).to.have.length(2);
  });
});
