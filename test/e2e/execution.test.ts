import { expect } from 'chai';
import { FakeClock } from '../../shared/clock.ts';
import { CONSUMERS } from '../../shared/topology.ts';
import { ok } from '../support/api.ts';
import { drained } from '../support/busDrained.ts';
import { drive } from '../support/drive.ts';
import { plannerApplied, startTestSystem } from '../support/embedded.ts';
import { nth } from '../support/nth.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const env = { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' };

describe('running jobs end to end (embedded mode, real HTTP targets)', function () {
  // The one test on the real clock, and the only one where real time is the point: a job every
  // second as deployed (planner, executor thread and target on the wall clock), its headers
  // and its log. Everything else here is logic and runs on a fake clock below.
  describe('on the real clock', function () {
    it('calls a job every second, with the X-Tock headers, and records each run in cron_logs', async () => {
      const target = await startTarget((req) => ({ body: `hello from ${req.url}` }));
      const system = await startTestSystem({ env: { ...env, TOCK_EXECUTOR_THREAD: 'on' } });
      try {
        const hits = () => target.received.filter((r) => r.url === '/every-second');
        const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/every-second`, expression: '* * * * * *' }));
        await waitFor(() => hits().length >= 3, '3 runs', 8000);
        await ok(system.api.call('cron_disable', { id: job.id }));
        const first = nth(hits());
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
        const times = new Set(hits().map((r) => r.headers['x-tock-scheduled-time']));
        expect(times.size, 'no occurrence called twice').to.equal(hits().length);
      } finally {
        await system.destroy();
        await target.close();
      }
    });
  });

  describe('on a fake clock', function () {
    // Off the whole second, so no occurrence falls on the instant of a change.
    const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000 + 250);
    let system: Awaited<ReturnType<typeof startTestSystem>>;
    let target: Awaited<ReturnType<typeof startTarget>>;
    const failing = new Set<string>();
    const path = (url: string) => url.split('?', 1)[0]!;
    const hits = (p: string) => target.received.filter((r) => path(r.url) === p);
    const scheduledMs = (p: string) => hits(p).map((r) => Number(r.headers['x-tock-scheduled-time']) * 1000);

    before(async () => {
      target = await startTarget((req) => (failing.has(path(req.url)) ? { status: 500, body: 'broken' } : { body: `hello from ${req.url}` }), { clock });
      system = await startTestSystem({ env, clock });
    });
    after(async () => {
      await system.destroy();
      await target.close();
    });

    it('a pause or an edit takes effect for the next occurrence, though runs go out ahead of time', async () => {
      const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/edited`, expression: '* * * * * *' }));
      await drive(clock, () => hits('/edited').length >= 2, '2 runs');
      await ok(system.api.call('cron_edit', { id: job.id, url: `${target.url}/moved` }));
      const edited = clock.now();
      await plannerApplied(system, job.id);
      await drive(clock, () => hits('/moved').length >= 2, '2 runs at the new URL');
      expect(scheduledMs('/edited').filter((t) => t > edited), 'old URL after the edit').to.deep.equal([]);
      expect(nth(scheduledMs('/moved')), 'the new URL from the next occurrence on').to.equal(Math.ceil(edited / 1000) * 1000);
      await ok(system.api.call('cron_pause', { id: job.id }));
      const paused = clock.now();
      await plannerApplied(system, job.id);
      // Every run out ahead has gone or been dropped: none can come after this.
      await drive(clock, () => drained(system.bus, CONSUMERS.executors), 'the due runs drained');
      expect(scheduledMs('/moved').filter((t) => t > paused), 'runs after the pause').to.deep.equal([]);
      expect(await ok(system.api.call('cron_next', { id: job.id }))).to.deep.equal([]);
      await ok(system.api.call('cron_delete', { id: job.id }));
    });

    it('runs cron_run now with a payload, without touching the schedule', async () => {
      const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/manual?x=1`, expression: 'manual', httpMethod: 'POST' }));
      const at = await ok<number>(system.api.call('cron_run', { id: job.id, payload: '{"ts":"__timestamp__"}' }));
      expect(at).to.equal(Math.floor(clock.now() / 1000));
      // Due now: it goes out without the clock moving.
      const req = nth(await waitFor(() => hits('/manual').length === 1 && hits('/manual'), 'the manual run'));
      expect(req.method).to.equal('POST');
      expect(req.headers['content-type']).to.equal('application/json');
      expect(JSON.parse(req.body).ts).to.equal(String(at));
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
      const disabled: any = await drive(clock, async () => {
        const current: any = await ok(system.api.call('cron_get', { id: job.id }));
        return current.status === 4 && current;
      }, 'auto-disable');
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
      const when = Math.floor(clock.now() / 1000) + 2;
      const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/once`, expression: `@${when}` }));
      expect(await ok(system.api.call('cron_next', { id: job.id }))).to.deep.equal([when]);
      await drive(clock, async () => (await ok<any>(system.api.call('cron_get', { id: job.id }))).status === 6, 'status 6');
      expect(hits('/once')).to.have.length(1);
      expect(Number(nth(hits('/once')).headers['x-tock-scheduled-time'])).to.equal(when);
      expect(nth(hits('/once')).at, 'called at its instant, not before').to.be.at.least(when * 1000);
    });

    it('skips a run when `instances` runs of the job are still going, and records the skip', async () => {
      // The first call is held open until the skip is seen: the next occurrence certainly finds it going.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const slow = await startTarget(() => ({ until: held }), { clock });
      try {
        const job: any = await ok(system.api.call('cron_add', { url: `${slow.url}/slow`, expression: '* * * * * *', instances: 1, timeout: 10 }));
        const skipped = await drive(clock, async () => {
          const list = await ok<any[]>(system.api.call('cron_logs', { id: job.id }));
          return list.find((l) => l.result.status === 2);
        }, 'a skipped run');
        expect(skipped.result.error).to.contain('instances = 1');
        expect(slow.received, 'never two calls of one job at once').to.have.length(1);
        release();
        await ok(system.api.call('cron_delete', { id: job.id }));
      } finally {
        release();
        await slow.close();
      }
    });
  });
});
