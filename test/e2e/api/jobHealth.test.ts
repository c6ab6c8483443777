import { expect } from 'chai';
import { ok } from '../../support/api.ts';
import { startTestSystem } from '../../support/embedded.ts';
import { startTarget } from '../../support/target.ts';
import { waitFor } from '../../support/waitFor.ts';

/**
 * docs/api.md (Job health): job records carry Tock's additions from the logs, so one cron_list
 * shows every job's last result and recent outcomes (the dashboard's list costs one call).
 */
describe('job records: health additions (lastResult, recentOutcomes, runs24h, failures24h, hourly24h, groupName)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  before(async () => {
    const long = 'Internal error: database connection refused. '.repeat(20);
    target = await startTarget((r) => (r.url.startsWith('/bad') ? { status: 500, body: long } : { body: 'fine' }));
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
  });
  after(async () => {
    await system?.destroy();
    await target?.close();
  });

  it('gives the last result (texts cut to 200 characters), newest outcomes first, the counts of the last day and the group name', async () => {
    const group = await ok(system.api.call('group_add', { name: 'nightly' }));
    const good = await ok(system.api.call('cron_add', { url: `${target.url}/good`, expression: 'manual', group: group.id }));
    const bad = await ok(system.api.call('cron_add', { url: `${target.url}/bad`, expression: 'manual' }));
    const idle = await ok(system.api.call('cron_add', { url: `${target.url}/idle`, expression: 'manual' }));
    expect(idle).to.include({ lastResult: null, runs24h: 0, failures24h: 0, groupName: null });
    expect(idle.recentOutcomes).to.deep.equal([]);
    expect(good.groupName).to.equal('nightly');
    for (const id of [good.id, bad.id, good.id]) {
      const before = (await ok<any[]>(system.api.call('cron_logs', { id }))).length;
      await ok(system.api.call('cron_run', { id }));
      await waitFor(async () => (await ok<any[]>(system.api.call('cron_logs', { id }))).length > before, `a result of job ${id}`, 15_000);
    }
    const list = await ok<any[]>(system.api.call('cron_list'));
    const byId = new Map(list.map((j) => [j.id, j]));
    const g = byId.get(good.id);
    expect(g).to.include({ runs24h: 2, failures24h: 0, groupName: 'nightly' });
    expect(g.recentOutcomes).to.deep.equal([0, 0]);
    expect(g.lastResult).to.include({ status: 0, httpStatus: 200, output: 'fine', manual: true });
    const b = byId.get(bad.id);
    expect(b).to.include({ runs24h: 1, failures24h: 1 });
    expect(b.recentOutcomes).to.deep.equal([1]);
    // The same counts per clock hour: all in the current hour, the last of the 24.
    const hour = Math.floor(Date.now() / 3_600_000) * 3600;
    for (const j of list) expect(j.hourly24h.from, `job ${j.id}`).to.equal(hour - 23 * 3600);
    expect(g.hourly24h.runs).to.deep.equal([...Array(23).fill(0), 2]);
    expect(g.hourly24h.failures).to.deep.equal(Array(24).fill(0));
    expect(b.hourly24h.failures).to.deep.equal([...Array(23).fill(0), 1]);
    expect(byId.get(idle.id).hourly24h.runs).to.deep.equal(Array(24).fill(0));
    expect(b.lastResult).to.include({ status: 1, httpStatus: 500 });
    expect(b.lastResult.output).to.have.length(200).and.match(/^Internal error: database connection refused/);
    // cron_logs keeps the whole body; cron_get carries the same additions as cron_list.
    expect((await ok<any[]>(system.api.call('cron_logs', { id: bad.id })))[0].result.output.length).to.be.greaterThan(200);
    expect(await ok(system.api.call('cron_get', { id: bad.id }))).to.deep.equal(b);
  });
});

describe('job records: the health of a job just created', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  before(async () => {
    system = await startTestSystem();
  });
  after(async () => {
    await system?.destroy();
  });

  it('is that of a job with no run, known without the logs: cron_add and cron_batch_add answer it with the logs service down', async () => {
    const group = await ok(system.api.call('group_add', { name: 'nightly' }));
    await system.logs.stop();
    const hour = Math.floor(Date.now() / 3_600_000) * 3600;
    const one = await ok(system.api.call('cron_add', { url: 'http://127.0.0.1:9/one', expression: 'manual', group: group.id }));
    const batch = await ok<any[]>(system.api.call('cron_batch_add', { data: [{ url: 'http://127.0.0.1:9/a', expression: 'manual' }, { url: 'http://127.0.0.1:9/b', expression: '0 9 * * *' }] }));
    for (const job of [one, ...batch]) {
      expect(job, `job ${job.id}`).to.include({ lastResult: null, runs24h: 0, failures24h: 0 });
      expect(job.recentOutcomes).to.deep.equal([]);
      // The 24 whole hours ending with the current one (the next, should an hour begin meanwhile).
      expect([hour - 23 * 3600, hour - 22 * 3600]).to.include(job.hourly24h.from);
      expect(job.hourly24h).to.deep.include({ runs: Array(24).fill(0), failures: Array(24).fill(0) });
    }
    expect(one.groupName).to.equal('nightly');
    expect(batch.map((j) => j.groupName)).to.deep.equal([null, null]);
    // A read asks the logs, which cannot answer now: the record comes without its health.
    expect(await ok(system.api.call('cron_get', { id: one.id }))).to.include({ runs24h: null, recentOutcomes: null, groupName: null });
  });
});
