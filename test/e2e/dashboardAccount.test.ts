import { expect } from 'chai';
import { apiClient, fails, ok } from '../support/api.ts';
import { hasChromium, CHROMIUM, screenshotPath } from '../support/browser.ts';
import { openDashboard } from '../support/dashboardPage.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The account page in Chromium, at the default rate limit: shown with one call; the time zone
 * (the API's refusal at its field), a new signing secret and a new API token, each shown once; the
 * tab goes on with the new token, and the old one is refused by the API.
 */
describe('dashboard: account page', function () {
  this.timeout(90_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let tab: Awaited<ReturnType<typeof openDashboard>>;
  let token = '';
  const account = () => system.clients.jobs.getAccount({ id: 1n });

  before(async () => {
    // TOCK_RATE_LIMIT unset: the default, 1 request a second.
    system = await startTestSystem({ env: { TOCK_RATE_LIMIT: undefined as unknown as string } });
    tab = await openDashboard(system.baseUrl, TEST_TOKEN);
    await tab.page.locator('#jobs tbody tr').first().waitFor();
  });
  after(async () => {
    await tab?.close();
    await system?.destroy();
  });

  it('shows the account with one call; sets the time zone, a wrong one refused at its field', async () => {
    const { page } = tab;
    expect(await tab.open('/account', '#account-about dd')).to.deep.equal(['account_get']);
    const zone = page.locator('#account-timezone');
    expect(await zone.inputValue()).to.equal((await account()).timezone);
    // The field searches the browser's zones as it is typed.
    expect(await zone.getAttribute('list')).to.equal('time-zones');
    expect(await page.locator('#time-zones option[value="Asia/Tokyo"]').count()).to.equal(1);
    await zone.fill('Mars/Olympus');
    await tab.nextCall('account_edit', () => page.locator('#account-timezone-save').click());
    expect(await page.locator('#account-timezone-error').textContent()).to.match(/^timezone: /);
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('account-timezone');
    await zone.fill('Asia/Tokyo');
    await tab.nextCall('account_edit', () => page.locator('#account-timezone-save').click());
    await page.locator('#timezone-notice').filter({ hasText: 'Time zone set to Asia/Tokyo.' }).waitFor();
    expect(await page.locator('#account-timezone-error').textContent()).to.equal('');
    expect((await account()).timezone).to.equal('Asia/Tokyo');
  });

  it('makes a new signing secret after a confirmation, shown once with a copy button', async () => {
    const { page } = tab;
    const dismissed = tab.confirmNext(false);
    await page.locator('#rotate-secret').click();
    expect(await dismissed).to.match(/^Make a new signing secret\?/);
    await pause(300);
    expect(tab.calls.map((c) => c.fn)).not.to.include('account_secret_rotate');
    const accepted = tab.confirmNext();
    await tab.nextCall('account_secret_rotate', () => page.locator('#rotate-secret').click());
    await accepted;
    const secret = await page.locator('#new-signing-secret').inputValue();
    expect(secret).to.match(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(await page.locator('#secret-result .hint').textContent()).to.match(/^Shown only now: .* The previous secret also signs until /);
    await tab.page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.locator('#new-signing-secret-copy').click();
    await page.locator('#secret-result .notice').filter({ hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(secret);
  });

  it('replaces the API token after a confirmation: shown once, the tab goes on with it, the old one is refused', async () => {
    const { page } = tab;
    const asked = tab.confirmNext();
    const rotation = await tab.nextCall('account_token_rotate', () => page.locator('#rotate-token').click());
    expect(await asked).to.match(/^Replace the API token now\? The current token stops working at once/);
    expect(rotation.http).to.equal(200);
    token = await page.locator('#new-token').inputValue();
    expect(token).to.match(/^[A-Za-z0-9]{32}$/).and.not.equal(TEST_TOKEN);
    expect(await page.evaluate(() => sessionStorage.getItem('tock.token'))).to.equal(token);
    await page.screenshot({ path: screenshotPath('account.png'), fullPage: true });
    // The tab's next pages are served with the new token: no sign-in form, no refusal.
    expect(await tab.open('/groups', '#groups tbody tr')).to.deep.equal(['group_list']);
    expect(await page.locator('#token').count()).to.equal(0);
    await pause(1100);
    await fails(system.api.call('account_get'), 11);
    expect(await ok(apiClient(system.baseUrl, token).call('account_get'))).to.include({ id: 1, timezone: 'Asia/Tokyo' });
    // That call spent the new token's budget, which the tab shares: the next page waits for it.
    await pause(1100);
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px, with a secret shown: no horizontal scroll, one h1, no serious or critical axe violation`, async () => {
      const { page } = tab;
      await page.setViewportSize({ width, height: 900 });
      await tab.open('/account', '#account-about dd');
      const plain = await tab.layout();
      // A secret is shown after a rotation: the page with it checked as well (the previous one's overlap makes it harmless).
      const accepted = tab.confirmNext();
      await tab.nextCall('account_secret_rotate', () => page.locator('#rotate-secret').click());
      await accepted;
      await page.locator('#new-signing-secret').waitFor();
      const shown = await tab.layout();
      console.log(`      account: scrollWidth ${plain.scroll}/${shown.scroll}, axe ${[...plain.all, ...shown.all].map((v) => `${v.id}(${v.impact})`).join(' ') || 'none'}`);
      for (const l of [plain, shown]) {
        expect(l.scroll).to.be.at.most(width);
        expect(l.h1).to.equal(1);
        expect(l.bad).to.deep.equal([]);
      }
      if (width === 390) await page.screenshot({ path: screenshotPath('account-390.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    });
  }

  it('made no call that was refused, and wrote nothing to the console', () => {
    expect(tab.calls.filter((c) => c.http !== 200 && !(c.fn === 'account_edit' && c.http === 400))).to.deep.equal([]);
    expect(tab.problems).to.deep.equal([]);
  });
});
