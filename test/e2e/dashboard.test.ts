import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { REFRESH_MS } from '../../services/gateway/dashboard/src/poll.ts';
import { ok, rawRequest } from '../support/api.ts';
import { hasChromium, launchChromium, CHROMIUM } from '../support/browser.ts';
import { waitForText, watchProblems } from '../support/dashboardPage.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The dashboard in a real browser (Debian's Chromium driven by playwright-core) against a real
 * embedded Tock and a real HTTP target: everything it shows comes from /api/v1 with the token.
 */
describe('dashboard in a browser', function () {
  this.timeout(60_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  // One browser for the file (its start is the slow part); each test page is a tab of its own,
  // with a session storage of its own.
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  describe('Chromium against embedded Tock', function () {
    let system: Awaited<ReturnType<typeof startTestSystem>>;
    let target: Awaited<ReturnType<typeof startTarget>>;
    let context: BrowserContext;
    let page: Page;
    let jobId: number;
    /** Script errors and CSP violations the page reports: none is expected. */
    let problems: string[] = [];

    before(async () => {
      target = await startTarget(() => ({ body: 'pong from the target' }));
      system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
      context = browser.context;
      page = await context.newPage();
      // Not console errors: the wrong token's refusal (401) and the deleted job's 404 are expected.
      problems = watchProblems(page, { consoleErrors: false });
    });
    after(async () => {
      await page?.close();
      await system?.destroy();
      await target?.close();
    });

    const text = async (selector: string) => (await page.locator(selector).textContent()) ?? '';
    const jobs = async () => ok<any[]>(system.api.call('cron_list', {}));
    const waitText = (selector: string, re: RegExp, timeoutMs?: number) => waitForText(page, selector, re, timeoutMs);

    it('answers / with a redirect and the page with strict security headers', async () => {
      const root = await fetch(`${system.baseUrl}/`, { redirect: 'manual' });
      expect(root.status).to.equal(302);
      expect(root.headers.get('location')).to.equal('/dashboard/');
      const response = (await page.goto(`${system.baseUrl}/`))!;
      expect(page.url()).to.equal(`${system.baseUrl}/dashboard/`);
      const headers = response.headers();
      expect(headers['content-security-policy']).to.match(/default-src 'self'/).and.match(/script-src 'self'/).and.match(/frame-ancestors 'none'/);
      expect(headers['content-security-policy']).not.to.contain('unsafe-inline');
      expect(headers['x-content-type-options']).to.equal('nosniff');
      expect(headers['referrer-policy']).to.equal('no-referrer');
      for (const file of ['app.js', 'style.css']) {
        const asset = await rawRequest(system.baseUrl, `/dashboard/${file}`, { method: 'GET' });
        expect(asset.http, file).to.equal(200);
        expect(asset.headers.get('content-security-policy'), file).to.contain("default-src 'self'");
      }
    });

    it('refuses a wrong token with a clear message, keeps a good one in session storage only', async () => {
      await page.locator('#token').fill('WrongToken0123456789abcdefghijkl');
      await page.locator('button[type=submit]').click();
      await waitText('#login-error', /refused/);
      expect(await text('#login-error')).to.match(/^This token was refused: .*token/i);
      expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);

      await page.locator('#token').fill(TEST_TOKEN);
      await page.locator('button[type=submit]').click();
      await page.locator('table#jobs').waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('tock.token'))).to.equal(TEST_TOKEN);
      expect(await page.evaluate(() => localStorage.length)).to.equal(0);
      expect(await context.cookies()).to.deep.equal([]);
    });

    it('creates a job through the form, with a schedule preview, and lists it', async () => {
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/new`);
      await page.locator('#field-url').fill(`${target.url}/from-dashboard`);
      await page.locator('#field-expression').fill('0 9 * * 1-5');
      await page.locator('#field-timezone').fill('America/New_York');
      await page.locator('#field-name').fill('dashboard job');
      await page.locator('#field-retries').fill('2');
      await waitText('#schedule-preview li', /./);
      const preview = await page.locator('#schedule-preview li').allTextContents();
      expect(preview.slice(1)).to.have.length(5);
      for (const line of preview.slice(1)) expect(line).to.match(/^\d{4}-\d\d-\d\d 09:00:00$/);
      await page.locator('#save').click();
      await page.waitForURL(/#\/jobs\/\d+$/);
      jobId = Number(/(\d+)$/.exec(page.url())![1]);
      const [job] = await jobs();
      expect(job).to.include({ id: jobId, name: 'dashboard job', url: `${target.url}/from-dashboard`, expression: '0 9 * * 1-5', timezone: 'America/New_York', retries: 2 });
      await waitText('#next-runs li', / 09:00:00$/);

      await page.goto(`${system.baseUrl}/dashboard/#/`);
      const row = page.locator(`#jobs tr[data-job-id="${jobId}"]`);
      await row.waitFor();
      expect(await row.locator('.col-name').textContent()).to.equal('dashboard job');
      expect(await row.locator('.state').textContent()).to.equal('ok');
    });

    it("shows the API's message at the expression field for a bad expression, and creates nothing", async () => {
      const before = await jobs();
      const api = await system.api.call('cron_add', { url: `${target.url}/never`, expression: 'every banana' });
      expect(api.code).to.equal(3);
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/new`);
      await page.locator('#field-url').fill(`${target.url}/never`);
      await page.locator('#field-expression').fill('every banana');
      await page.locator('#save').click();
      await waitText('#error-expression', /expression/);
      expect(await text('#error-expression')).to.equal(api.message);
      expect(await text('#form-error')).to.equal('');
      expect(page.url()).to.match(/#\/jobs\/new$/);
      expect(await jobs()).to.deep.equal(before);
    });

    it('runs a job now: the target is called and the execution shows in the detail', async () => {
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/${jobId}`);
      await page.locator('#action-run').click();
      await waitFor(() => target.received.some((r) => r.url === '/from-dashboard'), 'the target is called', 10_000);
      await waitText('#executions tbody tr', /succeeded/, 15_000);
      const cells = await page.locator('#executions tbody tr').first().locator('td').allTextContents();
      expect(cells[2]).to.equal('200');
      expect(cells[6]).to.equal('pong from the target');
    });

    it('pauses and resumes a job', async () => {
      await page.locator('#action-pause').click();
      await waitText('#job-status', /^paused$/);
      expect((await ok<any>(system.api.call('cron_get', { id: jobId }))).status).to.equal(5);
      await page.locator('#action-resume').click();
      await waitText('#job-status', /^ok$/);
      expect((await ok<any>(system.api.call('cron_get', { id: jobId }))).status).to.equal(0);
    });

    it('edits a job through the form: only what changed is sent, so masked credentials stay as stored', async () => {
      const job = await ok<any>(system.api.call('cron_add', { url: `http://user:s3cret@${target.url.slice('http://'.length)}/with-auth`, expression: 'manual', name: 'before' }));
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/${job.id}/edit`);
      const url = page.locator('#field-url');
      await url.waitFor();
      expect(await url.inputValue()).to.match(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+\/with-auth$/);
      // Changing the URL but leaving the mask would store "***" as the credentials: stopped, at the field.
      await url.fill((await url.inputValue()).replace('/with-auth', '/moved'));
      await page.locator('#save').click();
      await waitText('#error-url', /masked/);
      await url.fill((await url.inputValue()).replace('/moved', '/with-auth'));
      await page.locator('#field-name').fill('after');
      await page.locator('#save').click();
      await page.waitForURL(new RegExp(`#/jobs/${job.id}$`));
      expect(await ok<any>(system.api.call('cron_get', { id: job.id }))).to.include({ name: 'after', url: job.url });
      await page.locator('#action-run').click();
      const call = await waitFor(() => target.received.find((r) => r.url === '/with-auth'), 'the edited job calls its target', 10_000);
      expect(call.headers.authorization).to.equal(`Basic ${Buffer.from('user:s3cret').toString('base64')}`);
      await ok(system.api.call('cron_delete', { id: job.id }));
    });

    it('lists the notification channels (masked) and names them under notifyChannels in the form', async () => {
      const channel = await ok<any>(system.api.call('channel_add', { type: 'webhook', name: 'ops hook', url: 'https://hooks.example.com/secret-path' }));
      await page.goto(`${system.baseUrl}/dashboard/#/channels`);
      const row = page.locator(`#channels tbody tr[data-channel-id="${channel.id}"]`);
      await row.waitFor();
      const cells = await row.locator('td').allTextContents();
      expect(cells.slice(0, 2)).to.deep.equal(['ops hook', 'Webhook (signed JSON)']);
      expect(cells[2]).to.equal(channel.url).and.not.contain('secret-path');
      // The form names channels by name; the ticked ones are what the job notifies.
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/new`);
      await page.locator(`#notify-channels label[for="channel-${channel.id}"]`).waitFor();
      expect(await text(`#notify-channels label[for="channel-${channel.id}"]`)).to.equal('ops hook (webhook)');
      await page.locator('#field-url').fill(`${target.url}/notifying`);
      await page.locator('#field-expression').fill('manual');
      await page.locator(`#channel-${channel.id}`).check();
      await page.locator('#save').click();
      await page.waitForURL(/#\/jobs\/\d+$/);
      const id = Number(/(\d+)$/.exec(page.url())![1]);
      expect((await ok<any>(system.api.call('cron_get', { id }))).notifyChannels).to.equal(String(channel.id));
      await ok(system.api.call('cron_delete', { id }));
    });

    it('labels the form in owner words, in groups, with a time zone list to search', async () => {
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/new`);
      await page.locator('form.job-form legend').first().waitFor();
      expect(await page.locator('form.job-form > fieldset > legend').allTextContents()).to.deep.equal(['What to call', 'When', 'Response checks', 'Failures and notifications']);
      expect(await text('label[for="field-retryBackoff"]')).to.equal('Wait between retries (seconds)');
      expect(await text('label[for="field-httpMethod"]')).to.equal('HTTP method');
      expect(await page.locator('#field-timezone').getAttribute('list')).to.equal('time-zones');
      const zones = await page.locator('#time-zones option').evaluateAll((o) => o.map((e) => (e as HTMLOptionElement).value));
      expect(zones).to.include.members(['Europe/London', 'America/New_York', 'Asia/Tokyo']);
    });

    it('warns in the preview when a run meets a daylight-saving gap or a repeated hour', async () => {
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/new`);
      await page.locator('#field-timezone').fill('Europe/London');
      // Sundays of March at 01:30: the five shown include the last one, when 01:30 does not exist
      // in London (the clocks go from 01:00 to 02:00) and the run is moved to 02:00.
      await page.locator('#field-expression').fill('30 1 * 3 0');
      await waitText('#schedule-preview', /Daylight saving/);
      const gap = await page.locator('#schedule-preview li').filter({ hasText: 'Daylight saving' }).allTextContents();
      expect(gap).to.have.length(1);
      for (const line of gap) expect(line).to.match(/ 02:00:00 Daylight saving: the clocks go forward at this run \(01:00 becomes 02:00\)/);
      // On the last Sunday of October 01:30 happens twice: the run is the first of the two.
      await page.locator('#field-expression').fill('30 1 * 10 0');
      await waitText('#schedule-preview', /happens twice/);
      const overlap = await page.locator('#schedule-preview li').filter({ hasText: 'Daylight saving' }).allTextContents();
      expect(overlap).to.have.length(1);
      for (const line of overlap) {
        expect(line).to.match(/ 01:30:00 Daylight saving: 01:30 happens twice that night .*the first one, at UTC\+01:00/);
      }
      await page.locator('#field-expression').fill('0 12 * * *');
      await waitText('#schedule-preview li:nth-child(2)', /12:00:00$/);
      expect(await page.locator('#schedule-preview .dst-warning').count()).to.equal(0);
    });

    it('renders a name made of markup as text', async () => {
      const name = '<img src=x onerror="window.__xss=1">';
      const job = await ok<any>(system.api.call('cron_add', { url: `${target.url}/xss`, expression: 'manual', name }));
      await page.goto(`${system.baseUrl}/dashboard/#/`);
      const cell = page.locator(`#jobs tr[data-job-id="${job.id}"] .col-name`);
      await cell.waitFor();
      expect(await cell.textContent()).to.equal(name);
      expect(await page.locator('#jobs img').count()).to.equal(0);
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/${job.id}`);
      await waitText('h1', /onerror/);
      expect(await page.locator('main img').count()).to.equal(0);
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).to.equal(undefined);
    });

    it('stops refreshing the list while the tab is hidden, and refreshes it as soon as it shows', async () => {
      // The page's timers on a clock the test can move (it still runs on by itself).
      await page.clock.install();
      await page.goto(`${system.baseUrl}/dashboard/#/`);
      // The list is drawn: its first refresh is over and the next is a whole period away.
      await page.locator('table#jobs tbody tr').first().waitFor();
      let shown = false;
      /** One entry per cron_list the page asks for from here: whether the tab showed by then. */
      const lists: boolean[] = [];
      const onRequest = (request: { url(): string }) => {
        if (request.url().endsWith('/api/v1/cron_list')) lists.push(shown);
      };
      page.on('request', onRequest);
      try {
        // What the browser does when the tab goes to the background. (A string: tsx would wrap a
        // function's inner arrow in a helper that does not exist in the page.)
        const setHidden = (hidden: boolean) =>
          page.evaluate(`Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${hidden} }); document.dispatchEvent(new Event('visibilitychange'))`);
        await setHidden(true);
        // Two refresh periods on the page's clock: a visible tab would have refreshed in them.
        await page.clock.fastForward(2 * REFRESH_MS);
        shown = true;
        await setHidden(false);
        // At once, or as soon as a refresh still running ends: well before the next period.
        await waitFor(() => lists.length > 0, 'a refresh as soon as the tab shows', REFRESH_MS - 1000);
        // The page's requests reach this process in the order it makes them: one made while the
        // tab was hidden would come before the one it made on showing.
        expect(lists[0], 'the first refresh after hiding came on showing').to.equal(true);
      } finally {
        page.off('request', onRequest);
      }
    });

    it('deletes a job after confirmation', async () => {
      await page.goto(`${system.baseUrl}/dashboard/#/jobs/${jobId}`);
      await page.locator('#action-delete').waitFor();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.locator('#action-delete').click();
      await page.waitForURL(/#\/$/);
      expect((await system.api.call('cron_get', { id: jobId })).code).to.equal(5);
      await page.locator('table#jobs tbody tr').first().waitFor();
      expect(await page.locator(`#jobs tr[data-job-id="${jobId}"]`).count()).to.equal(0);
    });

    it('signs out: the token leaves session storage', async () => {
      await page.locator('#sign-out').click();
      await page.locator('#token').waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);
    });

    it('goes back to the sign-in form, with the reason, when the token is rotated while the page is open', async () => {
      const { account, token } = await system.adminClient.createAccount({ name: 'rotated', timezone: 'UTC', jobLimit: 0 });
      await page.locator('#token').fill(token);
      await page.locator('button[type=submit]').click();
      await page.locator('table#jobs').waitFor();
      await system.adminClient.rotateToken({ id: account!.id });
      // The next call with the old token meets error 11: the channels page's, or the list's own
      // refresh when it comes first (then the page is on the sign-in form already, and the link gone).
      await page.locator('nav a[href="#/channels"]').click({ timeout: 3000 }).catch(() => undefined);
      await page.locator('#token').waitFor({ timeout: 8000 });
      expect(await text('#login-error')).to.match(/token/i);
      expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);
    });

    it('ran without a script error or a Content-Security-Policy violation', () => {
      expect(problems).to.deep.equal([]);
    });
  });
});
