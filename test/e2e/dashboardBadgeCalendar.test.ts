import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page, Request } from 'playwright-core';
import { FakeClock } from '../../shared/clock.ts';
import { ok, rawRequest } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM, screenshotPath } from '../support/browser.ts';
import { plannerApplied, startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { storeMark } from '../support/targets.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const START = Date.UTC(2030, 0, 1, 0, 0, 0);
const S = START / 1000;

/**
 * The Calendar view and a job's Badge section, in Debian's Chromium against an embedded Tock on a
 * fake clock (nothing runs): the next 24 hours grouped by hour, links to the jobs, names shown as
 * text; the badge made only when asked, shown, copied as URL and Markdown, and revoked after a
 * confirmation. Both at 1280 and 390 px without sideways scrolling, one h1, axe clean. It writes
 * docs/dashboard/calendar.png and badge.png.
 */
describe('dashboard: the calendar and a job\'s badge, in a browser', function () {
  this.timeout(60_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let page: Page;
  let hourly: any;
  let kolkata: any;
  const calls: string[] = [];
  const problems: string[] = [];

  before(async () => {
    system = await startTestSystem({ clock: new FakeClock(START) });
    hourly = await ok(system.api.call('cron_add', { url: 'https://example.com/h', expression: '0 * * * *', timezone: 'UTC', name: 'hourly <b>report</b> & "co"' }));
    kolkata = await ok(system.api.call('cron_add', { url: 'https://example.com/k', expression: '30 9 * * *', timezone: 'Asia/Kolkata', name: 'morning in Kolkata with a rather long name that must wrap on a phone' }));
    await plannerApplied(system, kolkata.id);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
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

  const checkLayout = async (what: string, shot: string, element: string) => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      if (width === 1280) await page.locator(element).screenshot({ path: screenshotPath(shot) });
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${what} at ${width}: scroll width`).to.be.at.most(width);
      expect(await page.locator('h1').count(), `${what}: one h1`).to.equal(1);
      await page.evaluate(AXE);
      const violations = await page.evaluate<{ id: string; impact: string }[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`);
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), `${what} at ${width}`).to.deep.equal([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  it('Calendar: the next 24 hours by hour of the browser\'s clock, each run linking to its job', async () => {
    await page.locator('nav a', { hasText: 'Calendar' }).click();
    await page.locator('#calendar section').first().waitFor();
    expect(await page.locator('h1').textContent()).to.equal('Next 24 hours');
    // The expected headings, from the same instants on the browser's own clock.
    const times = [...Array.from({ length: 24 }, (_, i) => S + (i + 1) * 3600), S + 4 * 3600];
    const expected = await page.evaluate((ts) => {
      const f = new Intl.DateTimeFormat('en-CA', { hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit' });
      return [...new Set(ts.sort((a, b) => a - b).map((t) => { const p = Object.fromEntries(f.formatToParts(t * 1000).map((x) => [x.type, x.value])); return `${p.year}-${p.month}-${p.day} ${p.hour}:00`; }))];
    }, times);
    const headings = await page.locator('#calendar section h2').evaluateAll((els) => els.map((e) => e.firstChild?.textContent));
    expect(headings).to.deep.equal(expected);
    expect(await page.locator('#calendar li').count()).to.equal(25);
    const kolkataRun = page.locator(`#calendar li[data-job="${kolkata.id}"]`);
    expect(await kolkataRun.getAttribute('data-time')).to.equal(String(S + 4 * 3600));
    expect(await kolkataRun.textContent()).to.contain('(09:30 in Asia/Kolkata)');
    // A name is text, never markup.
    const first = page.locator(`#calendar li[data-job="${hourly.id}"] a`).first();
    expect(await first.textContent()).to.equal('hourly <b>report</b> & "co"');
    expect(await page.locator('#calendar b').count()).to.equal(0);
    expect(calls.filter((fn) => fn === 'account_calendar').length).to.be.at.least(1);
    await checkLayout('the calendar', 'calendar.png', 'main');
    await first.click();
    await page.locator('#next-runs li').first().waitFor();
    expect(page.url()).to.match(new RegExp(`#/jobs/${hourly.id}$`));
  });

  it('Badge: made only when asked, shown with its URL and Markdown to copy; revoked after a confirmation', async () => {
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/${kolkata.id}`);
    await page.locator('#next-runs li').first().waitFor();
    await page.locator('#badge > summary').click();
    expect(calls).not.to.include('cron_badge');
    await page.locator('#badge-show').click();
    await page.locator('#badge-image').waitFor();
    const badge = await ok(system.api.call('cron_badge', { id: kolkata.id }));
    expect(await page.locator('#badge-url').inputValue()).to.equal(badge.url);
    expect(await page.locator('#badge-markdown').inputValue()).to.equal(badge.markdown);
    // The image loads under the dashboard's own Content-Security-Policy (img-src 'self').
    await page.waitForFunction(() => (document.getElementById('badge-image') as HTMLImageElement).naturalWidth > 0);
    // The SVG parses as XML, in the browser's own parser, with the name as text.
    const parsed = await page.evaluate(async (path) => {
      const doc = new DOMParser().parseFromString(await (await fetch(path)).text(), 'image/svg+xml');
      return { error: doc.querySelector('parsererror') !== null, label: doc.querySelector('text')?.textContent, scripts: doc.querySelectorAll('script').length };
    }, badge.path);
    expect(parsed).to.deep.equal({ error: false, label: 'morning in Kolkata with a rather long n…', scripts: 0 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.locator('#badge-markdown-copy').click();
    await page.locator('#badge-notice').filter({ hasText: 'Markdown copied.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(badge.markdown);
    await checkLayout('the badge section', 'badge.png', '#badge');

    const mark = storeMark(system.dataDir);
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.locator('#badge-revoke').click();
    expect(calls).not.to.include('cron_badge_revoke');
    expect(storeMark(system.dataDir)).to.deep.equal(mark);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('#badge-revoke').click();
    await page.locator('#badge-notice').filter({ hasText: 'revoked' }).waitFor();
    expect((await rawRequest(system.baseUrl, badge.path, { method: 'GET' })).http).to.equal(404);
    await page.locator('#badge-show').waitFor();
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    expect(problems).to.deep.equal([]);
  });
});
