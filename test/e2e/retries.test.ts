import { expect } from 'chai';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget, type Received } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/** Each path answers from its own script, one entry per call (the last repeats). */
type Answer = { status?: number; body?: string; delayMs?: number; headers?: Record<string, string> };

describe('retries (embedded mode, real HTTP targets)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const scripts = new Map<string, Answer[]>();
  const calls = new Map<string, number>();

  before(async () => {
    target = await startTarget((req) => {
      const path = req.url.split('?')[0]!;
      const n = calls.get(path) ?? 0;
      calls.set(path, n + 1);
      const script = scripts.get(path) ?? [{}];
      return script[Math.min(n, script.length - 1)]!;
    });
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
  });
  after(async () => {
    await system.destroy();
    await target.close();
  });
  const hits = (path: string): Received[] => target.received.filter((r) => r.url.split('?')[0] === path);

  /** A job that runs once (cron_run), retried as given; resolves with it once `attempts` results are logged. */
  async function runOnce(path: string, settings: Record<string, unknown>, attempts: number) {
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}${path}`, expression: 'manual', ...settings }));
    expect(job).to.include({ retries: settings.retries ?? 0, retryBackoff: settings.retryBackoff ?? 10 });
    await ok(system.api.call('cron_run', { id: job.id }));
    const logs = await waitFor(async () => {
      const entries = await ok<any[]>(system.api.call('cron_logs', { id: job.id }));
      return entries.length >= attempts && entries.every((e) => e.result.attempt <= attempts) && entries;
    }, `${attempts} attempts logged`, 40_000);
    return { job, logs: logs.map((e: any) => e.result).reverse() };
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
    await new Promise((r) => setTimeout(r, 500));
    expect((await ok<any>(system.api.call('cron_get', { id: job.id }))).fail).to.equal(0);
    expect(await ok<number>(system.api.call('cron_logs', { id: job.id })).then((l: any) => l.length)).to.equal(3);
  });

  it("waits at least a 429's Retry-After before the next attempt", async () => {
    scripts.set('/busy', [{ status: 429, headers: { 'retry-after': '2' }, body: 'slow down' }, { status: 200 }]);
    const { logs } = await runOnce('/busy', { retries: 1, retryBackoff: 1 }, 2);
    expect(logs.map((l: any) => l.httpStatus)).to.deep.equal([429, 200]);
    const [first, second] = hits('/busy');
    expect(second!.at - first!.at).to.be.at.least(2000);
  });

  it('retries a call that timed out', async () => {
    scripts.set('/hangs', [{ delayMs: 8000 }, { status: 200 }]);
    const { logs } = await runOnce('/hangs', { retries: 1, retryBackoff: 1, timeout: 5 }, 2);
    expect(logs[0].error).to.match(/timed out after 5 s/);
    expect(logs.map((l: any) => [l.attempt, l.status])).to.deep.equal([
      [1, 1],
      [2, 0],
    ]);
  });

  it('does not retry a 404, and counts an occurrence whose attempts all failed once', async () => {
    scripts.set('/gone', [{ status: 404 }]);
    const gone = await runOnce('/gone', { retries: 3, retryBackoff: 1 }, 1);
    scripts.set('/broken', [{ status: 503 }]);
    const broken = await runOnce('/broken', { retries: 2, retryBackoff: 1 }, 3);
    await new Promise((r) => setTimeout(r, 1500));
    expect(hits('/gone')).to.have.length(1);
    expect(gone.logs[0]).to.include({ attempt: 1, willRetry: false, httpStatus: 404 });
    expect(broken.logs.map((l: any) => l.willRetry)).to.deep.equal([true, true, false]);
    await waitFor(async () => (await ok<any>(system.api.call('cron_get', { id: broken.job.id }))).fail === 1, 'the failure counted', 5000);
    await new Promise((r) => setTimeout(r, 500));
    expect((await ok<any>(system.api.call('cron_get', { id: broken.job.id }))).fail, 'counted once').to.equal(1);
    expect((await ok<any>(system.api.call('cron_get', { id: gone.job.id }))).fail).to.equal(1);
  });

  it('drops the retries still waiting when the job is changed', async () => {
    // Retry-After 2 s: with full jitter alone the next attempt may come due within milliseconds,
    // before the change lands; this way it is certainly still waiting when the job is disabled.
    scripts.set('/dropped', [{ status: 503, headers: { 'retry-after': '2' } }]);
    const job: any = await ok(system.api.call('cron_add', { url: `${target.url}/dropped`, expression: 'manual', retries: 3, retryBackoff: 2 }));
    await ok(system.api.call('cron_run', { id: job.id }));
    await waitFor(() => hits('/dropped').length >= 1, 'the first attempt', 10_000);
    await ok(system.api.call('cron_disable', { id: job.id }));
    await new Promise((r) => setTimeout(r, 5000));
    expect(hits('/dropped'), 'no attempt after the change').to.have.length(1);
  });

  it('refuses settings out of range, naming them', async () => {
    const bad = await system.api.call('cron_add', { url: `${target.url}/x`, retries: 11 });
    expect(bad).to.include({ status: 'error', code: 3 });
    expect((bad as any).message).to.match(/^retries: /);
    const bad2 = await system.api.call('cron_add', { url: `${target.url}/x`, retryBackoff: 0 });
    expect((bad2 as any).message).to.match(/^retryBackoff: /);
  });
});
