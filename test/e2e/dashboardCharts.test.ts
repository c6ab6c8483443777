import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { ok } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM } from '../support/browser.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/** The stylesheet's colours that charts.ts paints with: succeeded and failed. */
const GREEN = [0x1d, 0x7a, 0x3a];
const RED = [0xb4, 0x23, 0x18];

/**
 * The charts in Chromium (uPlot, bundled with the dashboard): the account's runs and failures per
 * hour on the list, a job's durations by outcome and its lateness on its page, each with its text
 * alternative, drawn from what the API answers, under the page's strict CSP.
 */
describe('dashboard charts', function () {
  this.timeout(90_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let page: Page;
  let mixed: any;
  const problems: string[] = [];
  let calls = 0;

  before(async () => {
    // The mixed job's 2nd and 5th calls fail; its calls take longer and longer.
    target = await startTarget((r) => {
      if (!r.url.startsWith('/mixed')) return { status: 500, body: 'down' };
      calls++;
      return { status: calls % 3 === 2 ? 500 : 200, delayMs: 40 * calls, body: `call ${calls}` };
    });
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    mixed = await ok(system.api.call('cron_add', { url: `${target.url}/mixed`, expression: 'manual', name: 'mixed' }));
    const down = await ok(system.api.call('cron_add', { url: `${target.url}/down`, expression: 'manual', name: 'down' }));
    for (const [job, n] of [[mixed, 6], [down, 2]] as const) {
      for (let i = 0; i < n; i++) {
        await ok(system.api.call('cron_run', { id: job.id }));
        await waitFor(async () => (await ok<any[]>(system.api.call('cron_logs', { id: job.id }))).length > i, `run ${i + 1} of ${job.name}`, 15_000);
      }
    }
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
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

  /** How many of a canvas's pixels are (nearly) this colour: what uPlot actually drew. */
  const pixels = (canvas: Locator, rgb: number[]) =>
    canvas.evaluate((c, [r, g, b]) => {
      const data = (c as HTMLCanvasElement).getContext('2d')!.getImageData(0, 0, (c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - r!) < 16 && Math.abs(data[i + 1]! - g!) < 16 && Math.abs(data[i + 2]! - b!) < 16 && data[i + 3]! > 200) n++;
      return n;
    }, rgb);

  it("charts the account's runs and failures per hour, with the counts in words and in a table", async () => {
    const list = await ok<any[]>(system.api.call('cron_list'));
    const runs = list.reduce((n, j) => n + j.hourly24h.runs[23], 0);
    const failures = list.reduce((n, j) => n + j.hourly24h.failures[23], 0);
    expect([runs, failures]).to.deep.equal([8, 4]);
    const canvas = page.locator('#chart-hourly canvas');
    await canvas.waitFor();
    expect(await page.locator('#chart-hourly .chart-plot').getAttribute('role')).to.equal('img');
    expect(await page.locator('#chart-hourly .chart-plot').getAttribute('aria-describedby')).to.equal('chart-hourly-summary');
    expect(await page.locator('#chart-hourly-summary').textContent()).to.match(/^8 runs in the last 24 hours \(.+\), 4 failed; busiest hour (\d\d):00-\d\d:00 with 8; failures in 1 hour, most at \1:00-\d\d:00 \(4\)\.$/);
    const rows = page.locator('#hourly-table tbody tr');
    expect(await rows.count()).to.equal(24);
    expect(await rows.last().locator('td').allTextContents()).to.deep.equal(['8', '4']);
    expect(await rows.first().locator('td').allTextContents()).to.deep.equal(['0', '0']);
    // The bar of the current hour: red for its failures, green above them.
    expect(await pixels(canvas, RED)).to.be.greaterThan(20);
    expect(await pixels(canvas, GREEN)).to.be.greaterThan(20);
  });

  it("charts a job's durations by outcome and its lateness, each described in words", async () => {
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/${mixed.id}`);
    const canvas = page.locator('#chart-duration canvas');
    await canvas.waitFor();
    const logs = (await ok<any[]>(system.api.call('cron_logs', { id: mixed.id }))).map((l) => l.result);
    const longest = Math.max(...logs.map((r) => r.executionTime));
    expect(longest).to.be.greaterThan(0.2);
    expect(await page.locator('#chart-duration-summary').textContent()).to.match(/^6 runs from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(.+\): 4 succeeded, 2 failed\. Median duration \d+ ms, longest \d+ ms at .+\.$/);
    expect(await pixels(canvas, RED)).to.be.greaterThan(10);
    expect(await pixels(canvas, GREEN)).to.be.greaterThan(10);
    expect(await page.locator('#chart-lateness canvas').count()).to.equal(1);
    expect(await page.locator('#chart-lateness-summary').textContent()).to.match(/^Median lateness .+; 0 runs of 6 started more than 60 s after its time\.$/);
    expect(await page.locator('#chart-lateness .chart-plot').getAttribute('aria-label')).to.equal('Chart: Lateness of each run');
  });

  it('follows the width of the screen: narrower on a phone, without horizontal scroll', async () => {
    const width = () => page.locator('#chart-duration canvas').evaluate((c) => c.getBoundingClientRect().width);
    const wide = await width();
    await page.setViewportSize({ width: 390, height: 800 });
    await waitFor(async () => (await width()) < 390, 'the chart to shrink', 5000);
    expect(wide).to.be.greaterThan(390);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
  });

  it('ran without a script error, a console error or a Content-Security-Policy violation', () => {
    expect(problems).to.deep.equal([]);
  });
});
