import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page, Request } from 'playwright-core';
import { ok } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM, screenshotPath } from '../support/browser.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { storeMark } from '../support/targets.ts';
import { waitFor } from '../support/waitFor.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A job's history on its page, in Debian's Chromium against an embedded Tock: fetched only when
 * the History section is opened (the page's three calls stay three), the versions with what
 * changed (secrets only as changed), and "Restore this version" after a confirmation. It writes
 * docs/dashboard/history.png.
 */
describe('dashboard: a job\'s history and restoring a version, in a browser', function () {
  this.timeout(60_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let page: Page;
  let job: any;
  /** The page's API calls, by function name, in order. */
  const calls: string[] = [];
  const problems: string[] = [];

  before(async () => {
    system = await startTestSystem();
    job = await ok(system.api.call('cron_add', { url: 'https://alice:dash-url-pw@example.com/a', expression: '0 9 * * *', timezone: 'UTC', name: 'first', password: 'dash-pw-1' }));
    await ok(system.api.call('cron_edit', { id: job.id, name: 'second', timeout: 60 }));
    await ok(system.api.call('cron_edit', { id: job.id, expression: '30 18 * * *', password: 'dash-pw-2' }));
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // A refused call is a console error too (the last test makes one on purpose): only script errors and CSP count.
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    page.on('request', (request: Request) => {
      const m = /\/api\/v1\/(\w+)$/.exec(request.url());
      if (m) calls.push(m[1]!);
    });
    await page.goto(`${system.baseUrl}/dashboard/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.locator('button[type=submit]').click();
    await page.locator('table#jobs').waitFor();
  });
  after(async () => {
    await browser?.close();
    await system?.destroy();
  });

  const version = (n: number) => page.locator(`#versions > li[data-version="${n}"]`);
  const changes = (n: number) => version(n).locator('ul.changes > li').allTextContents();

  it('opens a job with its three calls; the history is fetched only when its section is opened', async () => {
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/${job.id}`);
    const from = calls.length;
    await page.locator('#next-runs li').first().waitFor();
    await waitFor(() => calls.slice(from).includes('cron_logs'), 'the runs are read', 10_000);
    expect(await page.locator('#history').getAttribute('open')).to.equal(null);
    // The page's own refresh (every 5 s) may have come already; a list refresh queued before the link was followed is the list's.
    expect([...new Set(calls.slice(from).filter((fn) => fn !== 'cron_list'))]).to.have.members(['cron_get', 'cron_logs', 'cron_next']);

    await page.locator('#history > summary').click();
    await version(1).waitFor();
    expect(calls.slice(from).filter((fn) => fn === 'cron_history')).to.have.length(1);
    expect(await page.locator('#versions > li[data-version]').evaluateAll((els) => els.map((e) => e.getAttribute('data-version')))).to.deep.equal(['3', '2', '1']);
    expect(await version(3).locator('.version-head').textContent()).to.match(/^Version 3 · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d · Changed \(current\)$/);
    expect(await changes(3)).to.deep.equal(['Schedule: "0 9 * * *" → "30 18 * * *"', 'Password (Basic auth): changed (a secret, not shown)']);
    expect(await changes(2)).to.deep.equal(['Name: "first" → "second"', 'Give up after (seconds): 30 → 60']);
    expect(await version(1).locator('.version-head').textContent()).to.match(/ · Created$/);
    // Every version but the current one can be restored.
    expect(await page.locator('#versions button').evaluateAll((els) => els.map((e) => e.id))).to.deep.equal(['restore-2', 'restore-1']);
    const text = (await page.locator('main').textContent()) ?? '';
    for (const secret of ['dash-url-pw', 'dash-pw-1', 'dash-pw-2', 'enc:v1']) expect(text).not.to.contain(secret);
  });

  it('restores a version after a confirmation, as a new version; cancelling changes nothing', async () => {
    const mark = storeMark(system.dataDir);
    page.once('dialog', (dialog) => void dialog.dismiss());
    // The confirmation blocks the click's handler: when the click returns, the handler has decided.
    await page.locator('#restore-1').click();
    expect(calls).not.to.include('cron_rollback');
    expect(storeMark(system.dataDir), 'cancelled: nothing stored').to.deep.equal(mark);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.locator('#restore-1').click();
    await page.locator('#history-notice').filter({ hasText: 'version 1 are restored' }).waitFor();
    expect(asked).to.contain(`version 1 of cron job ${job.id}`);
    await version(4).waitFor();
    expect(await version(4).locator('.version-head').textContent()).to.match(/ · Restored version 1 \(current\)$/);
    expect(await changes(4)).to.deep.equal([
      'Name: "second" → "first"',
      'Schedule: "30 18 * * *" → "0 9 * * *"',
      'Password (Basic auth): changed (a secret, not shown)',
      'Give up after (seconds): 60 → 30',
    ]);
    expect(await ok(system.api.call('cron_get', { id: job.id }))).to.include({ name: 'first', expression: '0 9 * * *', timeout: 30, hasPassword: true });
    // The page shows the restored job and its next runs (09:00 UTC again).
    await waitFor(async () => /^first/.test((await page.locator('h1').textContent()) ?? ''), 'the title is the restored name', 10_000);
    await waitFor(async () => (await page.locator('#next-runs li').allTextContents()).every((t) => t.endsWith(' 09:00:00')), 'the next runs follow the restored schedule', 10_000);
  });

  it('the opened history at 1280 and 390 px: no horizontal scroll, no serious or critical axe violation', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await version(4).waitFor();
      if (width === 1280) await page.locator('#history').screenshot({ path: screenshotPath('history.png') });
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${width}: scroll width`).to.be.at.most(width);
      await page.evaluate(AXE);
      const violations = await page.evaluate<{ id: string; impact: string }[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`);
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), String(width)).to.deep.equal([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("shows the API's refusal in the section when a version no longer validates", async () => {
    const group = await ok(system.api.call('group_add', { name: 'gone soon' }));
    const grouped = await ok(system.api.call('cron_add', { url: 'https://example.com/g', expression: 'manual', group: group.id }));
    await ok(system.api.call('group_delete', { id: group.id }));
    const api = await system.api.call('cron_rollback', { id: grouped.id, version: 1 });
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/${grouped.id}`);
    await page.locator('#history > summary').click();
    await version(2).waitFor();
    const mark = storeMark(system.dataDir);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('#restore-1').click();
    await page.locator('#history-error').filter({ hasText: /./ }).waitFor();
    expect(await page.locator('#history-error').textContent()).to.equal(api.message);
    expect(api.message).to.match(/^group: /);
    expect(storeMark(system.dataDir)).to.deep.equal(mark);
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    expect(problems).to.deep.equal([]);
  });
});
