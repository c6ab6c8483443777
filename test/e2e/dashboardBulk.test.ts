import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page, Request } from 'playwright-core';
import { ok } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM } from '../support/browser.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Acting on several jobs from the list (enable, disable, pause, move to a group, delete: one batch
 * call each), and cloning a job through the form, in Chromium at the default rate limit: no call
 * refused, nothing on the console.
 */
describe('dashboard: bulk actions and clone, at the default rate limit', function () {
  this.timeout(120_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let page: Page;
  let jobs: any[];
  let group: any;
  /** The page's API calls: function, parameters, HTTP status. */
  const calls: { fn: string; params: any; http: number }[] = [];
  const problems: string[] = [];
  const api = <T = any>(fn: string, params: Record<string, unknown> = {}) => ok<T>(system.api.call(fn, params));
  /**
   * A job as stored, read through the operator's service: the API would spend the token's budget
   * (one request a second), which the page shares.
   */
  const stored = async (id: number) => (await system.adminClient.listAccountJobs({ accountId: 1n, limit: 1000 })).jobs.find((j) => Number(j.id) === id);
  const row = (j: any) => page.locator(`#jobs tr[data-job-id="${j.id}"]`);
  const names = () => page.locator('#jobs tbody tr[data-job-id] .col-name').allTextContents();
  /** Waits for the page's next call of `fn` to be answered, and returns it. */
  const nextCall = async (fn: string, action: () => Promise<unknown>) => {
    const before = calls.filter((c) => c.fn === fn).length;
    await action();
    return waitFor(() => calls.filter((c) => c.fn === fn)[before], `a ${fn} call`, 15_000);
  };

  before(async () => {
    target = await startTarget((r) => ({ body: `seen ${r.headers.authorization ?? ''} ${String(r.headers['x-key'] ?? '')}` }));
    // TOCK_RATE_LIMIT unset: the default, 1 request a second.
    system = await startTestSystem({ env: { TOCK_RATE_LIMIT: undefined as unknown as string, TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    group = await api('group_add', { name: 'reports' });
    await pause(1100);
    const data = ['alpha', 'bravo', 'charlie', 'delta', 'echo'].map((name) => ({ url: `${target.url}/${name}`, expression: '0 0 1 1 *', name }));
    data.push({ url: `${target.url}/original`, expression: '0 9 * * 1-5', name: 'original', ...{ timezone: 'Europe/London', username: 'svc', password: 'pw-secret', httpHeaders: 'X-Key: abcd1234', httpMethod: 'POST', postData: 'a=1', timeout: 15, retries: 2, group: group.id } });
    await pause(1100);
    jobs = await api<any[]>('cron_batch_add', { data });
    await pause(1100);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (m) => {
      // A refusal the page shows at a field (the clone's masked header) is a 400 the browser logs.
      if ((m.type() === 'error' && !/status of 400/.test(m.text())) || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('requestfinished', (request: Request) => {
      const m = /\/api\/v1\/(\w+)$/.exec(request.url());
      if (m) void request.response().then((r) => calls.push({ fn: m[1]!, params: JSON.parse(request.postData() ?? '{}'), http: r?.status() ?? 0 }));
    });
    await page.goto(`${system.baseUrl}/dashboard/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.locator('button[type=submit]').click();
    await waitFor(async () => (await names()).length === 6, 'the six jobs', 15_000);
  });
  after(async () => {
    await browser?.close();
    await system?.destroy();
    await target?.close();
  });

  it('selects rows only in selection mode: otherwise each row is one Tab stop', async () => {
    expect(await page.locator('#jobs tbody input[type=checkbox]').count()).to.equal(0);
    expect(await page.locator('#bulk-bar').isVisible()).to.equal(false);
    await nextCall('group_list', () => page.locator('#bulk-toggle').click());
    expect(await page.locator('#bulk-toggle').getAttribute('aria-pressed')).to.equal('true');
    expect(await page.locator('#jobs tbody input[type=checkbox]').count()).to.equal(6);
    expect(await page.locator('#bulk-group option').allTextContents()).to.deep.equal(['no group', 'reports']);
    for (const j of jobs.slice(0, 3)) await row(j).locator('input[type=checkbox]').check();
    expect(await page.locator('#bulk-count').textContent()).to.equal('3 selected');
    expect(await row(jobs[1]).locator('input[type=checkbox]').getAttribute('aria-label')).to.equal('Select bravo');
  });

  it('disables, enables and pauses the selected jobs, one batch call each', async () => {
    const ids = jobs.slice(0, 3).map((j) => j.id);
    const disabled = await nextCall('cron_batch_disable', () => page.locator('#bulk-disable').click());
    expect(disabled.params).to.deep.equal({ id: ids.join(',') });
    await waitFor(async () => (await row(jobs[2]).locator('.state').textContent()) === 'disabled by you', 'the rows show it', 5000);
    for (const id of ids) expect((await stored(id))!.status).to.equal(1);
    expect((await stored(jobs[3].id))!.status).to.equal(0);
    expect(await page.locator('#bulk-notice').textContent()).to.equal('3 jobs disabled.');
    // The selection stays for the next action.
    await nextCall('cron_batch_enable', () => page.locator('#bulk-enable').click());
    await waitFor(async () => (await row(jobs[0]).locator('.state').textContent()) === 'ok', 'enabled again', 5000);
    await page.locator('#bulk-pause-for').selectOption('1 hour');
    const paused = await nextCall('cron_batch_pause', () => page.locator('#bulk-pause').click());
    expect(paused.params).to.deep.equal({ id: ids.join(','), for: '1 hour' });
    await waitFor(async () => (await row(jobs[1]).locator('.state').textContent()) === 'paused', 'paused', 5000);
    const until = Number((await stored(ids[1]))!.pausedUntil) - Math.floor(Date.now() / 1000);
    expect(until).to.be.within(3500, 3601);
  });

  it('moves the selected jobs to a group, and deletes them after a confirmation', async () => {
    await page.locator('#bulk-group').selectOption(String(group.id));
    const moved = await nextCall('cron_batch_edit', () => page.locator('#bulk-move').click());
    expect(moved.params).to.deep.equal({ id: jobs.slice(0, 3).map((j) => j.id).join(','), group: String(group.id) });
    for (const j of jobs.slice(0, 3)) expect(Number((await stored(j.id))!.group)).to.equal(group.id);
    await page.locator('#filter-group').selectOption(String(group.id));
    expect(await names()).to.deep.equal(['alpha', 'bravo', 'charlie', 'original']);
    // Only the selected rows that are shown are acted on: clear the selection, then pick two by the filter.
    await page.locator('#bulk-all').check();
    await page.locator('#bulk-all').uncheck();
    await page.locator('#filter-text').fill('a');
    await page.locator('#bulk-all').check();
    expect(await names()).to.deep.equal(['alpha', 'bravo', 'charlie', 'original']);
    await row(jobs[5]).locator('input[type=checkbox]').uncheck();
    expect(await page.locator('#bulk-count').textContent()).to.equal('3 selected');
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    const deleted = await nextCall('cron_batch_delete', () => page.locator('#bulk-delete').click());
    expect(asked).to.equal('Delete 3 jobs (alpha, bravo, charlie)? This cannot be undone.');
    expect(deleted.params).to.deep.equal({ id: jobs.slice(0, 3).map((j) => j.id).join(',') });
    await waitFor(async () => (await names()).length === 1, 'the rows gone', 5000);
    expect((await system.adminClient.listAccountJobs({ accountId: 1n, limit: 1000 })).jobs.map((j) => j.name).sort()).to.deep.equal(['delta', 'echo', 'original']);
    await page.locator('#filter-text').fill('');
    await page.locator('#filter-group').selectOption('');
  });

  it('at 1280 and 390 px while selecting: no horizontal scroll, no serious or critical axe violation', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${width}`).to.be.at.most(width);
      await page.evaluate(AXE);
      const violations = await page.evaluate<{ id: string; impact: string }[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))`);
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), `${width}`).to.deep.equal([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.locator('#bulk-toggle').click();
    expect(await page.locator('#jobs tbody input[type=checkbox]').count()).to.equal(0);
  });

  it('clones a job: the form holds its settings, asks for the secrets the API never shows, and saves a new job', async () => {
    const original = jobs[5];
    await page.goto(`${system.baseUrl}/dashboard/#/jobs/${original.id}`);
    await page.locator('main a[href$="/clone"]').click();
    await page.waitForURL(new RegExp(`#/jobs/${original.id}/clone$`));
    await page.locator('#clone-note').waitFor();
    expect(await page.locator('h1').textContent()).to.equal(`Copy of cron job #${original.id}`);
    expect(await page.locator('#clone-note').textContent()).to.equal('Saved as a new job. Not copied (the API never shows them), to type again: the password, the header values.');
    expect(await page.locator('#field-name').inputValue()).to.equal('original (copy)');
    expect(await page.locator('#field-expression').inputValue()).to.equal('0 9 * * 1-5');
    expect(await page.locator('#field-timezone').inputValue()).to.equal('Europe/London');
    expect(await page.locator('#field-group').inputValue()).to.equal(String(group.id));
    // A choice (the method) holds the job's value, not the list's first.
    expect(await page.locator('#field-httpMethod').inputValue()).to.equal('POST');
    expect(await page.locator('#field-httpHeaders').inputValue()).to.equal('X-Key: ***');
    // Saved as it is, the masked header would become "***": stopped at its field.
    await page.locator('#save').click();
    await page.locator('#error-httpHeaders').filter({ hasText: /masked/ }).waitFor();
    await page.locator('#field-httpHeaders').fill('X-Key: abcd1234');
    await page.locator('#field-password').fill('pw-secret');
    await page.locator('#save').click();
    await page.waitForURL(/#\/jobs\/\d+$/);
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    expect(id).not.to.equal(original.id);
    const [copy, source] = [await stored(id), await stored(original.id)];
    const settings = (j: any) => ({ ...j, id: 0n, name: '', createdAt: 0n, updatedAt: 0n });
    expect(settings(copy)).to.deep.equal(settings(source));
    expect(copy!.name).to.equal('original (copy)');
    // The copy calls with the secrets typed again (the page leaves first: the token's budget is shared).
    await page.goto('about:blank');
    await pause(2100);
    const tested = await api('cron_test', { id });
    expect(tested.output).to.equal('seen Basic *** ***');
    expect(target.received.at(-1)!.headers).to.include({ authorization: `Basic ${Buffer.from('svc:pw-secret').toString('base64')}`, 'x-key': 'abcd1234' });
  });

  it('made no call that was refused, and wrote nothing to the console', () => {
    expect(calls.filter((c) => c.http !== 200 && !(c.fn === 'cron_add' && c.http === 400))).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });
});
