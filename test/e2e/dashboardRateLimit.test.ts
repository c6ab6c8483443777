import { expect } from 'chai';
import type { Page, Request } from 'playwright-core';
import { ok } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM } from '../support/browser.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The dashboard at the default rate limit (1 request a second per token, burst 1), with 30 jobs
 * that have run: the list is one cron_list call, a job's page at most three, no call is refused
 * (a refusal is a console error in the browser), and an action waits its turn instead of failing.
 */
describe('dashboard at the default rate limit, 30 jobs', function () {
  this.timeout(90_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let page: Page;
  let ids: number[];
  /** Every API call the page made, in order: function, when, and `http` once answered. */
  const calls: { fn: string; http?: number; at: number }[] = [];
  const problems: string[] = [];

  before(async () => {
    target = await startTarget((r) => (r.url.startsWith('/bad') ? { status: 500, body: 'Internal error: database connection refused' } : { body: 'fine' }));
    // TOCK_RATE_LIMIT unset: the default.
    system = await startTestSystem({ env: { TOCK_RATE_LIMIT: undefined as unknown as string, TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    // Every third job fails; each runs once now (run: 1), so every row has a last result.
    const data = Array.from({ length: 30 }, (_, i) => ({ url: `${target.url}/${i % 3 === 0 ? 'bad' : 'ok'}/${i}`, expression: '0 0 1 1 *', name: `job ${String(i).padStart(2, '0')}`, run: 1 }));
    ids = (await ok<any[]>(system.api.call('cron_batch_add', { data }))).map((j) => j.id);
    await waitFor(() => target.received.length >= 30, 'the 30 runs', 20_000);
    // The results reach the logs a moment after the calls; then the token's bucket is full again.
    await pause(2000);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console ${message.type()}: ${message.text()}`);
    });
    // Taken when the page makes the call, not when Playwright reports its end: that report can
    // come after the page has already shown what the answer held.
    page.on('request', (request: Request) => {
      const m = /\/api\/v1\/(\w+)$/.exec(request.url());
      if (!m) return;
      const call: (typeof calls)[number] = { fn: m[1]!, at: Date.now() };
      calls.push(call);
      void request.response().then((r) => (call.http = r?.status() ?? 0));
    });
  });
  after(async () => {
    await browser?.close();
    await system?.destroy();
    await target?.close();
  });

  const marksShown = () => page.locator('#jobs tbody tr .marks .mark').count();

  it('signs in and shows all 30 jobs with their last result and state after one cron_list call', async () => {
    await page.goto(`${system.baseUrl}/dashboard/`);
    await page.locator('#token').fill(TEST_TOKEN);
    const started = Date.now();
    await page.locator('button[type=submit]').click();
    await waitFor(async () => (await marksShown()) === 30, '30 rows with their outcome marks', 15_000);
    const complete = Date.now() - started;
    expect(await page.locator('#jobs tbody tr[data-job-id]').count()).to.equal(30);
    expect(await page.locator('#jobs tbody .state-failing').count()).to.equal(10);
    expect(await page.locator('#jobs tbody .state-ok').count()).to.equal(20);
    const before = calls.filter((c) => c.at <= started + complete);
    expect(before.map((c) => c.fn)).to.deep.equal(['account_get', 'cron_list']);
    // The page's own timing of its calls (start-end, ms since the page loaded), to tell server time from pacing.
    const timing = await page.evaluate(() =>
      performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/v1/')).map((e) => `${e.name.split('/').pop()} ${Math.round(e.startTime)}-${Math.round((e as PerformanceResourceTiming).responseEnd)}`),
    );
    console.log(`      (calls in the page: ${timing.join(', ')})`);
    console.log(`      (30 jobs complete ${(complete / 1000).toFixed(2)} s after the sign-in click: ${before.length} calls)`);
  });

  it('refreshes with one call per 5 s, keeping the focus on the row the owner is on', async () => {
    const name = page.locator(`#jobs tr[data-job-id="${ids[4]}"] a`);
    await name.focus();
    const count = calls.length;
    await waitFor(() => calls.length >= count + 2, 'two refreshes', 15_000);
    expect(calls.slice(count).map((c) => c.fn)).to.deep.equal(['cron_list', 'cron_list']);
    expect(await page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-job-id'))).to.equal(String(ids[4]));
    expect(await page.evaluate(() => document.activeElement?.tagName)).to.equal('A');
  });

  it("opens a job's page with at most three calls, and Run now waits its turn instead of failing", async () => {
    const count = calls.length;
    await page.locator(`#jobs tr[data-job-id="${ids[0]}"] a`).click();
    await page.locator('#next-runs li').first().waitFor({ timeout: 10_000 });
    await page.locator('#executions tbody tr').first().waitFor();
    // A list refresh already queued when the link was followed may still go out: it is the list's.
    const fns = calls.slice(count).map((c) => c.fn);
    expect(fns.filter((f) => f !== 'cron_list')).to.have.members(['cron_get', 'cron_logs', 'cron_next']);
    expect(fns.filter((f) => f === 'cron_list').length).to.be.at.most(1);
    await page.locator('#action-run').click();
    await page.locator('#detail-notice').filter({ hasText: /Run queued/ }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#detail-error').textContent()).to.equal('');
    await waitFor(() => target.received.length >= 31, 'the run now call', 15_000);
  });

  it('made no call that was refused and wrote nothing to the console', () => {
    expect(calls.filter((c) => c.http !== undefined && c.http !== 200)).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });
});
