import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { REFRESH_MS } from '../../services/gateway/dashboard/src/poll.ts';
import { ok, rawRequest } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM, screenshotPath } from '../support/browser.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const BODY = 'Internal error: database connection refused (pool exhausted after 30 s)';

/**
 * The dashboard's health, runs and layout in Chromium: states by word and colour, outcome marks,
 * relative times labelled with their zone, sorting and the failing filter, a run opened to its
 * whole answer; and on every page, at 1280 px and at 390 px, no horizontal scroll, one h1 and no
 * serious or critical axe-core violation. The assets are compressed, hashed and cached for good.
 */
describe('dashboard: health, runs, any screen', function () {
  this.timeout(120_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let page: Page;
  let failing: any;
  let healthy: any;
  const problems: string[] = [];

  before(async () => {
    target = await startTarget((r) => (r.url.startsWith('/bad') ? { status: 500, body: BODY } : { body: 'fine' }));
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    const group = await ok(system.api.call('group_add', { name: 'reports' }));
    await ok(system.api.call('channel_add', { type: 'webhook', name: 'ops hook', url: 'https://hooks.example.com/secret-path' }));
    // Schedules half a day away: only the runs asked for happen while the page is checked (a
    // scheduled one would add a mark and a run to the totals at a time no assertion can know).
    const away = (minute: number) => `${minute} ${(new Date().getUTCHours() + 12) % 24} * *`;
    failing = await ok(system.api.call('cron_add', { url: `${target.url}/bad/a-very-long-path-that-would-not-fit-on-a-phone-screen?with=query&and=more`, expression: `${away(0)} 1-5`, timezone: 'Europe/London', name: 'billing export', run: 1 }));
    healthy = await ok(system.api.call('cron_add', { url: `${target.url}/ok`, expression: `${away(30)} *`, name: 'cache warmer', group: group.id, run: 1 }));
    await ok(system.api.call('cron_add', { url: `${target.url}/ok/paused`, expression: 'manual', name: 'paused one' }));
    await ok(system.api.call('cron_pause', { id: (await ok<any[]>(system.api.call('cron_list'))).find((j) => j.name === 'paused one').id }));
    await waitFor(async () => (await ok<any[]>(system.api.call('cron_list'))).filter((j) => j.lastResult).length === 2, 'both runs logged', 15_000);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${system.baseUrl}/dashboard/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.locator('button[type=submit]').click();
    await page.locator('#jobs tbody tr[data-job-id]').first().waitFor();
  });
  after(async () => {
    await browser?.close();
    await system?.destroy();
    await target?.close();
  });

  const row = (job: any) => page.locator(`#jobs tr[data-job-id="${job.id}"]`);

  it('shows each job\'s state by word and colour, its outcome marks, and relative times with the absolute time and zone on hover', async () => {
    await waitFor(async () => (await row(failing).locator('.state').textContent()) === 'failing', 'the failing state', 10_000);
    expect(await row(healthy).locator('.state').textContent()).to.equal('ok');
    expect(await page.locator('#jobs .state-paused').textContent()).to.equal('paused');
    const colour = (l: ReturnType<typeof row>) => l.locator('.state').evaluate((e) => getComputedStyle(e).backgroundColor + getComputedStyle(e).color);
    expect(await colour(row(failing))).not.to.equal(await colour(row(healthy)));
    // A count that differs names the job's runs.
    const runsOf = async (job: any) => JSON.stringify((await ok<any[]>(system.api.call('cron_logs', { id: job.id }))).map(({ result: r }) => ({ id: r.id, time: r.time, status: r.status, manual: r.manual, attempt: r.attempt, startTime: r.startTime, error: r.error })));
    expect(await row(failing).locator('.mark-failed').count(), await runsOf(failing)).to.equal(1);
    expect(await row(healthy).locator('.mark-ok').count(), await runsOf(healthy)).to.equal(1);
    const last = row(failing).locator('.col-last time');
    expect(await last.textContent()).to.match(/ago$|^now$/);
    expect(await last.getAttribute('title')).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(.+\/.+|UTC\)$/);
    expect(await row(failing).locator('.col-last').textContent()).to.contain('HTTP 500');
    expect(await page.locator('#totals').textContent()).to.match(/3 jobs:/).and.match(/1 failing/).and.match(/last 24 h: 2 runs, 1 failed/);
  });

  it('sorts by every column and filters the failing jobs', async () => {
    const names = () => page.locator('#jobs tbody tr[data-job-id] .col-name').allTextContents();
    expect(await names()).to.deep.equal(['billing export', 'cache warmer', 'paused one']);
    await page.locator('th button[data-sort="name"]').click();
    expect(await names()).to.deep.equal(['paused one', 'cache warmer', 'billing export']);
    expect(await page.locator('th:has(button[data-sort="name"])').getAttribute('aria-sort')).to.equal('descending');
    await page.locator('th button[data-sort="state"]').click();
    expect((await names())[0]).to.equal('billing export');
    for (const key of ['failures', 'lastRun', 'nextRun', 'schedule', 'url', 'fail']) {
      await page.locator(`th button[data-sort="${key}"]`).first().click();
      expect(await names(), key).to.have.length(3);
    }
    await page.locator('#totals button[data-state="failing"]').click();
    expect(await names()).to.deep.equal(['billing export']);
    await page.locator('#filter-state').selectOption('');
    expect(await names()).to.have.length(3);
  });

  it('has one Tab stop per row and a skip link to the content', async () => {
    const stops = await page.locator('#jobs tbody tr[data-job-id]').evaluateAll((rows) => rows.map((r) => r.querySelectorAll('a, button, input, select, [tabindex]').length));
    expect(stops).to.deep.equal([1, 1, 1]);
    await page.reload();
    await page.locator('#jobs tbody tr[data-job-id]').first().waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('main');
  });

  it("opens a failed run to its whole answer: the response body, status, duration, lateness, IP, server, attempt, manual", async () => {
    await page.screenshot({ path: screenshotPath('jobs.png'), fullPage: true });
    // The page's timers on a clock the test can move (it still runs on by itself): the job view's
    // refresh, armed after this, comes when the test says instead of a refresh period later.
    await page.clock.install();
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/${failing.id}`);
    const first = page.locator('#executions tbody tr[data-run-id]').first();
    await first.waitFor();
    const more = page.locator('#executions tr.more').first();
    expect(await more.isVisible()).to.equal(false);
    await first.locator('button').click();
    expect(await first.locator('button').getAttribute('aria-expanded')).to.equal('true');
    const text = (await more.textContent()) ?? '';
    expect(await more.locator('pre').textContent()).to.equal(BODY);
    for (const part of ['HTTP status500', 'Attempt1', 'Kindmanual (run now)', 'IP127.0.0.1', 'Lateness', 'Duration', 'Server']) expect(text).to.contain(part);
    // A refresh (its runs read again and redrawn) keeps it open.
    const refreshed = page.waitForResponse((r) => r.url().endsWith('/api/v1/cron_logs'));
    await page.clock.fastForward(REFRESH_MS);
    await refreshed;
    expect(await more.isVisible()).to.equal(true);
    await page.screenshot({ path: screenshotPath('job.png'), fullPage: true });
  });

  const pages = () => [
    ['jobs', '#/', '#jobs tbody tr[data-job-id]'],
    ['job', `#/jobs/${failing.id}`, '#executions tbody tr'],
    ['new job', '#/jobs/new', '#schedule-preview li'],
    ['edit job', `#/jobs/${healthy.id}/edit`, '#schedule-preview li'],
    ['channels', '#/channels', '#channels tbody tr'],
    ['groups', '#/groups', '#groups tbody tr'],
    ['account', '#/account', '#account-about dd'],
    ['calendar', '#/calendar', '#calendar section, #calendar-empty'],
  ];

  for (const width of [1280, 390]) {
    it(`at ${width} px: every page without horizontal scroll, with one h1 and no serious or critical axe violation`, async () => {
      await page.setViewportSize({ width, height: 900 });
      const report: string[] = [];
      for (const [name, hash, ready] of pages()) {
        await page.goto(`${system.baseUrl}/dashboard/${hash}`);
        await page.locator(ready!).first().waitFor();
        const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(await page.locator('h1').count(), `${name}: h1`).to.equal(1);
        await page.evaluate(AXE);
        const violations = await page.evaluate<{ id: string; impact: string; nodes: number }[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))`);
        report.push(`${name}: scrollWidth ${scroll}, axe ${violations.map((v) => `${v.id}(${v.impact})`).join(' ') || 'none'}`);
        expect(scroll, `${name}: scroll width`).to.be.at.most(width);
        expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), name).to.deep.equal([]);
        if (width === 390 && (name === 'jobs' || name === 'job')) await page.screenshot({ path: screenshotPath(`${name.replace(' ', '-')}-390.png`), fullPage: true });
        if (width === 1280 && name === 'new job') await page.screenshot({ path: screenshotPath('form.png'), fullPage: true });
      }
      console.log(`      ${report.join('\n      ')}`);
    });
  }

  it('the sign-in page, at 1280 and 390 px, empty and with a refusal shown: no horizontal scroll, one h1, no axe violation', async () => {
    // A tab of its own: no token in its session storage, so it shows the sign-in form.
    const signIn = await browser.context.newPage();
    signIn.on('pageerror', (error) => problems.push(`sign-in page error: ${error.message}`));
    try {
      const report: string[] = [];
      for (const width of [1280, 390]) {
        await signIn.setViewportSize({ width, height: 900 });
        await signIn.goto(`${system.baseUrl}/dashboard/`);
        await signIn.locator('#token').waitFor();
        for (const state of ['empty', 'refused']) {
          if (state === 'refused') {
            await signIn.locator('#token').fill('WrongToken0123456789abcdefghijkl');
            await signIn.locator('button[type=submit]').click();
            await signIn.locator('#login-error').filter({ hasText: /refused/ }).waitFor();
          }
          const scroll = await signIn.evaluate(() => document.documentElement.scrollWidth);
          expect(await signIn.locator('h1').count(), `${width} ${state}: h1`).to.equal(1);
          await signIn.evaluate(AXE);
          const violations = await signIn.evaluate<{ id: string; impact: string }[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`);
          report.push(`sign-in (${state}) at ${width}: scrollWidth ${scroll}, axe ${violations.map((v) => `${v.id}(${v.impact})`).join(' ') || 'none'}`);
          expect(scroll, `${width} ${state}: scroll width`).to.be.at.most(width);
          // None at all, not only no serious or critical one: the form is small enough to hold to that.
          expect(violations, `${width} ${state}`).to.deep.equal([]);
        }
        if (width === 390) await signIn.screenshot({ path: screenshotPath('sign-in-390.png'), fullPage: true });
      }
      console.log(`      ${report.join('\n      ')}`);
    } finally {
      await signIn.close();
    }
  });

  it('serves the assets compressed, under content-hashed names cached for good, with a favicon', async () => {
    const html = await (await fetch(`${system.baseUrl}/dashboard/`)).text();
    const script = /src="(app\.[0-9a-f]{12}\.js)"/.exec(html)?.[1];
    const style = /href="(style\.[0-9a-f]{12}\.css)"/.exec(html)?.[1];
    const icon = /href="(favicon\.[0-9a-f]{12}\.svg)"/.exec(html)?.[1];
    expect([script, style, icon]).to.not.include(undefined);
    for (const [encoding, expected] of [['br', 'br'], ['gzip', 'gzip'], ['identity', null]] as const) {
      const r = await rawRequest(system.baseUrl, `/dashboard/${script}`, { method: 'GET', headers: { 'Accept-Encoding': encoding } });
      expect(r.http).to.equal(200);
      expect(r.headers.get('content-encoding'), encoding).to.equal(expected);
      expect(r.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(r.headers.get('vary')).to.match(/accept-encoding/i);
    }
    const raw = await rawRequest(system.baseUrl, `/dashboard/${script}`, { method: 'GET', headers: { 'Accept-Encoding': 'identity' } });
    const br = await fetch(`${system.baseUrl}/dashboard/${script}`, { headers: { 'Accept-Encoding': 'br' } });
    const brBytes = Number(br.headers.get('content-length'));
    console.log(`      (script ${raw.text.length} bytes raw, ${brBytes} brotli)`);
    expect(brBytes).to.be.lessThan(raw.text.length / 2);
    const page = await rawRequest(system.baseUrl, '/dashboard/', { method: 'GET' });
    expect(page.headers.get('cache-control')).to.equal('no-cache');
    for (const path of ['/favicon.ico', `/dashboard/${icon}`]) {
      const r = await rawRequest(system.baseUrl, path, { method: 'GET' });
      expect(r.http, path).to.equal(200);
      expect(r.headers.get('content-type'), path).to.equal('image/svg+xml');
    }
  });

  it('ran without a script error or a console error', () => {
    expect(problems).to.deep.equal([]);
  });
});
