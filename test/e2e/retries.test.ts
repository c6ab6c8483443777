import { expect } from 'chai';
import { FakeClock } from '../../shared/clock.ts';
import { CONSUMERS } from '../../shared/topology.ts';
import { ok } from '../support/api.ts';
import { drained } from '../support/busDrained.ts';
import { drive } from '../support/drive.ts';
import { plannerApplied, startTestSystem } from '../support/embedded.ts';
import { startTarget, type Answer, type Received } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * On a fake clock: backoffs and Retry-After waits are the executor's logic, checked here to the
 * step of the clock without being waited out. The job `timeout` alone runs on real timers (the
 * executor's HTTP call), so that one wait is real, at the smallest timeout a job may have.
 */
describe('retries (embedded mode, real HTTP targets)', function () {
  const STEP_MS = 100;
  const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000 + 250);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  /** Each path answers from its own script, one entry per call (the last repeats). */
  const scripts = new Map<string, Answer[]>();
  const calls = new Map<string, number>();

  before(async () => {
    target = await startTarget((req) => {
      const path = req.url.split('?')[0]!;
      const n = calls.get(path) ?? 0;
      calls.set(path, n + 1);
      const script = scripts.get(path) ?? [{}];
      return script[Math.min(n, script.length - 1)]!;
    }, { clock });
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' }, clock });
  });
  after(async () => {
    await system.destroy();
    await target.close();
  });
  const hits = (path: string): Received[] => target.received.filter((r) => r.url.split('?')[0] === path);
  const logsOf = async (job: { id: number }) => (await ok<any[]>(system.api.call('cron_logs', { id: job.id }))).map((e) => e.result).reverse();
  /** Nothing more can happen: no attempt left on the bus, every execution logged and counted. */
  const settled = async () =>
    (await drained(system.bus, CONSUMERS.executors)) &&
    (await drained(system.bus, { stream: CONSUMERS.logs.stream, durable: system.logs.durable })) &&
    (await drained(system.bus, CONSUMERS.jobsFailures));

  /** A job that runs once (cron_run), retried as given; resolves with it once `attempts` results are logged. */
  async function runOnce(path: string, settings: Record<string, unknown>, attempts: number) {
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}${path}`, expression: 'manual', ...settings }));
    expect(job).to.include({ retries: settings.retries ?? 0, retryBackoff: settings.retryBackoff ?? 10 });
    await ok(system.api.call('cron_run', { id: job.id }));
    // Due now, the first attempt goes without the clock moving: each later one is as late as its wait.
    await waitFor(async () => (await logsOf(job)).length >= 1, 'the first attempt logged', 15_000);
    const logs = await drive(clock, async () => {
      const entries = await logsOf(job);
      return entries.length >= attempts && entries.every((e) => e.attempt <= attempts) && entries;
    }, `${attempts} attempts logged`, { stepMs: STEP_MS });
    return { job, logs };
  }

  it('tries a failing call again until it succeeds: every attempt logged, no failure counted', async () => {
    scripts.set('/flaky', [{ status: 500, body: 'down' }, { status: 502 }, { status: 200, body: 'fine' }]);
    const { job, logs } = await runOnce('/flaky', { retries: 3, retryBackoff: 1 }, 3);
    expect(logs.map((l: any) => [l.attempt, l.status, l.httpStatus, l.willRetry])).to.deep.equal([
      [1, 1, 500, true],
      [2, 1, 502, true],
      [3, 0, 200, false],
    ]);
    const seen = hits('/flaky');
    expect(new Set(seen.map((r) => r.headers['x-tock-run-id'])).size, 'one occurrence, one run id').to.equal(1);
    expect(seen.map((r) => r.headers['x-tock-attempt'] ?? '1')).to.deep.equal(['1', '2', '3']);
    expect(new Set(seen.map((r) => r.headers['x-tock-scheduled-time'])).size, 'the same request each time').to.equal(1);
    await drive(clock, settled, 'every attempt settled');
    expect((await ok<any>(system.api.call('cron_get', { id: job.id }))).fail).to.equal(0);
    expect(await logsOf(job)).to.have.length(3);
    expect(hits('/flaky')).to.have.length(3);
  });

  it("waits a 429's Retry-After before the next attempt", async () => {
    scripts.set('/busy', [{ status: 429, headers: { 'retry-after': '2' }, body: 'slow down' }, { status: 200 }]);
    const { logs } = await runOnce('/busy', { retries: 1, retryBackoff: 1 }, 2);
    expect(logs.map((l: any) => l.httpStatus)).to.deep.equal([429, 200]);
    const [first, second] = hits('/busy');
    // The backoff alone would be under a second; the answer asked for two, and got them (to a step of the clock).
    expect(second!.at - first!.at).to.be.at.least(2000).and.below(2000 + 2 * STEP_MS);
  });

  it('retries a call that timed out', async () => {
    let release!: () => void;
    const hang = new Promise<void>((resolve) => (release = resolve));
    scripts.set('/hangs', [{ until: hang }, { status: 200 }]);
    try {
      const { logs } = await runOnce('/hangs', { retries: 1, retryBackoff: 1, timeout: 5 }, 2);
      expect(logs[0].error).to.match(/timed out after 5 s/);
      expect(logs.map((l: any) => [l.attempt, l.status])).to.deep.equal([
        [1, 1],
        [2, 0],
      ]);
    } finally {
      release();
    }
  });

  it('does not retry a 404, and counts an occurrence whose attempts all failed once', async () => {
    scripts.set('/gone', [{ status: 404 }]);
    const gone = await runOnce('/gone', { retries: 3, retryBackoff: 1 }, 1);
    scripts.set('/broken', [{ status: 503 }]);
    const broken = await runOnce('/broken', { retries: 2, retryBackoff: 1 }, 3);
    await drive(clock, settled, 'every attempt settled');
    expect(hits('/gone')).to.have.length(1);
    expect(gone.logs[0]).to.include({ attempt: 1, willRetry: false, httpStatus: 404 });
    expect(broken.logs.map((l: any) => l.willRetry)).to.deep.equal([true, true, false]);
    expect((await ok<any>(system.api.call('cron_get', { id: broken.job.id }))).fail, 'counted once').to.equal(1);
    expect((await ok<any>(system.api.call('cron_get', { id: gone.job.id }))).fail).to.equal(1);
  });

  it('drops the retries still waiting when the job is changed', async () => {
    // Retry-After 2 s: with full jitter alone the next attempt may be due at once, without the
    // clock moving, before the change lands; this way it certainly waits when the job is disabled.
    scripts.set('/dropped', [{ status: 503, headers: { 'retry-after': '2' } }]);
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/dropped`, expression: 'manual', retries: 3, retryBackoff: 2 }));
    await ok(system.api.call('cron_run', { id: job.id }));
    const [first] = await waitFor(async () => {
      const entries = await logsOf(job);
      return entries.length >= 1 && entries;
    }, 'the first attempt logged');
    expect(first.willRetry, 'a retry is waiting').to.equal(true);
    // Some time passes between the call and the change, less than the retry waits: a change in the
    // very millisecond its run was planned in is not after it.
    await clock.advance(STEP_MS);
    await ok(system.api.call('cron_disable', { id: job.id }));
    await plannerApplied(system, job.id);
    await drive(clock, settled, 'the waiting retry settled');
    expect(hits('/dropped'), 'no attempt after the change').to.have.length(1);
    expect(await logsOf(job)).to.have.length(1);
  });

  it('refuses settings out of range, naming them', async () => {
    const bad = await system.api.call('cron_add', { url: `${target.url}/x`, retries: 11 });
    expect(bad).to.include({ status: 'error', code: 3 });
    expect((bad as any).message).to.match(/^retries: /);
    const bad2 = await system.api.call('cron_add', { url: `${target.url}/x`, retryBackoff: 0 });
    expect((bad2 as any).message).to.match(/^retryBackoff: /);
  });
});
