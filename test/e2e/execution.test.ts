import { expect } from 'chai';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';
import { nth } from '../support/nth.ts';

describe('running jobs end to end (embedded mode, real HTTP targets)', function () {
  this.timeout(30_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const failing = new Set<string>();

  before(async () => {
    target = await startTarget((req) => (failing.has(req.url.split('?', 1)[0]!) ? { status: 500, body: 'broken' } : { body: `hello from ${req.url}` }));
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
  });
  after(async () => {
    await system.destroy();
    await target.close();
  });
  const hits = (path: string) => target.received.filter((r) => r.url.split('?')[0] === path);

  it('calls a job every second, with the X-Tock headers, and records each run in cron_logs', async () => {
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/every-second`, expression: '* * * * * *' }));
    await waitFor(() => hits('/every-second').length >= 3, '3 runs', 8000);
    await ok(system.api.call('cron_disable', { id: job.id }));
    const first = nth(hits('/every-second'));
    expect(first.headers['x-tock-job-id']).to.equal(String(job.id));
    const scheduled = Number(first.headers['x-tock-scheduled-time']);
    expect(first.headers['x-tock-run-id']).to.equal(`${job.id}:${scheduled * 1000}`);
    expect(first.headers['user-agent']).to.match(/^Mozilla\/5\.0 \(compatible; Tock\/1\.0; \+/);
    const logs: any[] = await waitFor(async () => {
      const data = await ok<any[]>(system.api.call('cron_logs', { id: job.id }));
      return data.length >= 3 && data;
    }, 'three runs in cron_logs');
    expect(logs[0].result).to.include({ status: 0, httpStatus: 200, error: '', ip: '127.0.0.1' });
    expect(logs[0].result.output).to.equal('hello from /every-second');
    expect(logs[0].result.time).to.be.greaterThan(logs[1].result.time);
    const times = new Set(hits('/every-second').map((r) => r.headers['x-tock-scheduled-time']));
    expect(times.size, 'no occurrence called twice').to.equal(hits('/every-second').length);
  });

  it('a pause or an edit takes effect for the next occurrence, though runs go out ahead of time', async () => {
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/edited`, expression: '* * * * * *' }));
    await waitFor(() => hits('/edited').length >= 2, '2 runs', 8000);
    await ok(system.api.call('cron_edit', { id: job.id, url: `${target.url}/moved` }));
    const edited = Date.now();
    await waitFor(() => hits('/moved').length >= 2, '2 runs at the new URL', 8000);
    expect(hits('/edited').filter((r) => Number(r.headers['x-tock-scheduled-time']) * 1000 > edited), 'old URL after the edit').to.deep.equal([]);
    await ok(system.api.call('cron_pause', { id: job.id }));
    const paused = Date.now();
    await new Promise((r) => setTimeout(r, 2500));
    const after = hits('/moved').filter((r) => Number(r.headers['x-tock-scheduled-time']) * 1000 > paused);
    expect(after, 'runs after the pause').to.deep.equal([]);
    await ok(system.api.call('cron_delete', { id: job.id }));
  });

  it('runs cron_run now with a payload, without touching the schedule', async () => {
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/manual?x=1`, expression: 'manual', httpMethod: 'POST' }));
    const at = await ok<number>(system.api.call('cron_run', { id: job.id, payload: '{"ts":"__timestamp__"}' }));
    expect(at).to.be.within(Math.floor(Date.now() / 1000) - 2, Math.floor(Date.now() / 1000) + 2);
    const req = nth(await waitFor(() => hits('/manual').length === 1 && hits('/manual'), 'the manual run'));
    expect(req.method).to.equal('POST');
    expect(req.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(req.body).ts).to.match(/^\d{10}$/);
    const [log] = await waitFor(async () => {
      const list = await ok<any[]>(system.api.call('cron_logs', { id: job.id }));
      return list.length > 0 && list;
    }, 'the manual run in cron_logs');
    expect(log.result.payload).to.equal('{"ts":"__timestamp__"}');
    expect(await ok(system.api.call('cron_next', { id: job.id }))).to.deep.equal([]);
  });

  it('counts consecutive failures and disables the job at failureThreshold (status 4)', async () => {
    failing.add('/broken');
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/broken`, expression: '* * * * * *', failureThreshold: 2 }));
    const disabled: any = await waitFor(async () => {
      const current: any = await ok(system.api.call('cron_get', { id: job.id }));
      return current.status === 4 && current;
    }, 'auto-disable', 10_000);
    expect(disabled.fail).to.equal(2);
    const failures = await waitFor(async () => {
      const list = await ok<any[]>(system.api.call('cron_failures', { id: job.id }));
      return list.length >= 2 && list;
    }, 'two failures in cron_failures');
    expect(failures[0].result).to.include({ status: 1, httpStatus: 500, error: 'HTTP 500' });
    const across = await ok<any[]>(system.api.call('cron_failures', {}));
    expect(across.length).to.be.at.least(2);
    const enabled: any = await ok(system.api.call('cron_enable', { id: job.id }));
    expect(enabled).to.include({ status: 0, fail: 0 });
    await ok(system.api.call('cron_delete', { id: job.id }));
  });

  it('runs a one-time job once, then marks it stopped (status 6)', async () => {
    const when = Math.floor(Date.now() / 1000) + 2;
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/once`, expression: `@${when}` }));
    expect(await ok(system.api.call('cron_next', { id: job.id }))).to.deep.equal([when]);
    await waitFor(async () => (await ok<any>(system.api.call('cron_get', { id: job.id }))).status === 6, 'status 6', 10_000);
    expect(hits('/once')).to.have.length(1);
    expect(Number(hits('/once')[0]!.headers['x-tock-scheduled-time'])).to.equal(when);
  });

  it('skips a run when `instances` runs of the job are still going, and records the skip', async () => {
    const slow = await startTarget(() => ({ delayMs: 2500 }));
    try {
      const job: any = await ok(system.api.call('cron_add', { url: `${slow.url}/slow`, expression: '* * * * * *', instances: 1, timeout: 10 }));
      const skipped = await waitFor(async () => {
        const list = await ok<any[]>(system.api.call('cron_logs', { id: job.id }));
        return list.find((l) => l.result.status === 2);
      }, 'a skipped run', 10_000);
      expect(skipped.result.error).to.contain('instances = 1');
      await ok(system.api.call('cron_delete', { id: job.id }));
      const concurrent = slow.received.filter((r, i, all) => all.some((o) => o !== r && Math.abs(o.at - r.at) < 2000));
      expect(concurrent, 'never two calls of one job at once').to.have.length(0);
    } finally {
      await slow.close();
    }
  });
});
