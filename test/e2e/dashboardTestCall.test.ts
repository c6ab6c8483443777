import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { ok } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM } from '../support/browser.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The form's "Test" button in Chromium: cron_test with what the form holds (an edit: only what
 * changed, so the job's stored secrets are used), the answer shown under the form, a refusal at
 * the field it names, and nothing saved.
 */
describe('dashboard: a test call from the form', function () {
  this.timeout(60_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let page: Page;
  const problems: string[] = [];
  const text = async (selector: string) => (await page.locator(selector).textContent()) ?? '';
  const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  /** axe-core's serious and critical violations on the page as it is now. */
  const axe = async () => {
    await page.evaluate(AXE);
    const found = await page.evaluate<{ id: string; impact: string }[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`);
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  };

  before(async () => {
    target = await startTarget((r) =>
      r.url.startsWith('/bad') ? { status: 503, body: 'maintenance until 10:00' } : { status: 200, body: `hello ${r.headers.authorization ?? 'anonymous'}`, headers: { 'x-served-by': 'target-1' } },
    );
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (m) => {
      // The refusals below are answers the page shows; the browser logs a failed request (4xx) as an error.
      if ((m.type() === 'error' && !/status of 400/.test(m.text())) || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${system.baseUrl}/dashboard/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.locator('button[type=submit]').click();
    await page.locator('#jobs').waitFor();
  });
  after(async () => {
    await browser?.close();
    await system?.destroy();
    await target?.close();
  });

  it("shows what one call of a new job's settings got, and saves nothing", async () => {
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/new`);
    await page.locator('#field-url').fill(`${target.url}/hello`);
    await page.locator('#test-call').click();
    await page.locator('#test-outcome').waitFor();
    expect(await text('#test-outcome')).to.equal('Succeeded: a run would count as a success.');
    expect(await text('#test-result > dl')).to.contain('HTTP status200').and.contain(`URL${target.url}/hello`).and.contain('IP127.0.0.1');
    expect(await text('#test-body')).to.equal('hello anonymous');
    await page.locator('#test-headers summary').click();
    expect(await text('#test-headers')).to.contain('x-served-bytarget-1');
    expect(target.received.filter((r) => r.url === '/hello')).to.have.length(1);
    expect(target.received.at(-1)!.headers['x-tock-test']).to.equal('1');
    expect(page.url()).to.match(/#\/jobs\/new$/);
    expect(await ok<any[]>(system.api.call('cron_list'))).to.deep.equal([]);
    expect(await axe()).to.deep.equal([]);
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(390);
    expect(await axe()).to.deep.equal([]);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.locator('#field-url').fill(`${target.url}/bad`);
    await page.locator('#test-call').click();
    await waitFor(async () => (await text('#test-outcome')).startsWith('Failed'), 'the failed test', 10_000);
    expect(await text('#test-outcome')).to.equal('Failed: HTTP 503');
    expect(await text('#test-body')).to.equal('maintenance until 10:00');
  });

  it('puts a refusal under the field it names: an address the egress policy refuses', async () => {
    const before = target.received.length;
    await page.locator('#field-url').fill('http://169.254.169.254/latest/meta-data/');
    await page.locator('#test-call').click();
    await waitFor(async () => (await text('#error-url')) !== '', 'the refusal at the URL field', 10_000);
    expect(await text('#error-url')).to.equal('url: refused by egress policy: 169.254.169.254 is not an allowed target');
    expect(await text('#test-result')).to.equal('');
    expect(target.received.length).to.equal(before);
  });

  it("tests an edited job with its stored password, and leaves the job as it was", async () => {
    const job = await ok<any>(system.api.call('cron_add', { url: `${target.url}/stored`, expression: 'manual', name: 'stored', username: 'svc', password: 'kept-secret' }));
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/${job.id}/edit`);
    await page.locator('#field-name').waitFor();
    await page.locator('#field-name').fill('not saved');
    await page.locator('#test-call').click();
    await page.locator('#test-outcome').waitFor();
    expect(await text('#test-outcome')).to.match(/^Succeeded/);
    const basic = `Basic ${Buffer.from('svc:kept-secret').toString('base64')}`;
    expect(target.received.at(-1)!.headers.authorization).to.equal(basic);
    // The target echoed the credentials: the page shows them masked.
    expect(await text('#test-body')).to.equal('hello Basic ***');
    expect(await ok<any>(system.api.call('cron_get', { id: job.id }))).to.include({ name: 'stored' });
    expect(await ok<any[]>(system.api.call('cron_logs', { id: job.id }))).to.deep.equal([]);
  });

  it('ran without a script error, an unexpected console error or a Content-Security-Policy violation', () => {
    expect(problems).to.deep.equal([]);
  });
});
