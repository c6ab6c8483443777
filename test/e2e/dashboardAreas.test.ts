import { expect } from 'chai';
import { ok } from '../support/api.ts';
import { hasChromium, CHROMIUM, screenshotPath } from '../support/browser.ts';
import { openDashboard } from '../support/dashboardPage.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The groups and channels pages in Chromium, at the default rate limit: each shown with one call,
 * every change made through the page's forms and checked in the services behind the API (the API
 * itself would spend the budget the page shares), no call refused, nothing on the console.
 */
describe('dashboard: groups and channels pages', function () {
  this.timeout(120_000);
  if (!hasChromium() && process.env.CI !== 'true') {
    it.skip(`needs ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
    return;
  }
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let tab: Awaited<ReturnType<typeof openDashboard>>;
  let nightly: any;
  /** The webhook channel's first secret, as the page showed it. */
  let secret = '';
  const groups = async () => (await system.clients.jobs.listGroups({ accountId: 1n })).groups.map((g) => ({ id: Number(g.id), name: g.name, jobCount: g.jobCount }));
  const channels = async () => (await system.clients.notifier.channelList({ accountId: 1n })).channels;
  const jobs = async () => (await system.adminClient.listAccountJobs({ accountId: 1n, limit: 1000 })).jobs;

  before(async () => {
    target = await startTarget();
    // TOCK_RATE_LIMIT unset: the default, 1 request a second.
    system = await startTestSystem({ env: { TOCK_RATE_LIMIT: undefined as unknown as string, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_TELEGRAM_API: target.url } });
    nightly = await ok(system.api.call('group_add', { name: 'nightly' }));
    await pause(1100);
    const data = ['one', 'two'].map((name) => ({ url: `${target.url}/${name}`, expression: '0 0 1 1 *', name, group: nightly.id }));
    await ok(system.api.call('cron_batch_add', { data: [...data, { url: `${target.url}/other`, expression: '0 0 1 1 *', name: 'other' }] }));
    await pause(1100);
    tab = await openDashboard(system.baseUrl, TEST_TOKEN);
    // The list the sign-in opens has made its call: what follows is each page's own.
    await tab.page.locator('#jobs tbody tr[data-job-id]').first().waitFor();
  });
  after(async () => {
    await tab?.close();
    await system?.destroy();
    await target?.close();
  });

  it('groups: one call to show, job counts linking to the filtered job list', async () => {
    const { page } = tab;
    expect(await tab.open('/groups', '#groups tr[data-group-id]')).to.deep.equal(['group_list']);
    const row = page.locator(`#groups tr[data-group-id="${nightly.id}"]`);
    expect(await row.locator('td[data-label="Jobs"]').textContent()).to.equal('2 jobs in nightly');
    await row.locator('td[data-label="Jobs"] a').click();
    await page.waitForURL(new RegExp(`#/\\?group=${nightly.id}$`));
    await waitFor(async () => (await page.locator('#jobs tbody tr[data-job-id]').count()) === 2, 'the two jobs of the group', 10_000);
    expect(await page.locator('#filter-group').inputValue()).to.equal(String(nightly.id));
    expect((await page.locator('#jobs tbody tr[data-job-id] .col-name').allTextContents()).sort()).to.deep.equal(['one', 'two']);
  });

  it('groups: adds one (the API\'s refusal at the field), renames it, deletes one after a confirmation naming it', async () => {
    const { page } = tab;
    await tab.open('/groups', '#groups tr[data-group-id]');
    await tab.nextCall('group_add', () => page.locator('#group-add-save').click());
    expect(await page.locator('#group-add-name-error').textContent()).to.match(/^name: /);
    await page.locator('#group-add-name').fill('weekly');
    await tab.nextCall('group_add', () => page.locator('#group-add-save').click());
    await page.locator('#groups-notice').filter({ hasText: 'Group weekly added.' }).waitFor();
    const weekly = (await groups()).find((g) => g.name === 'weekly')!;
    expect(weekly).to.include({ jobCount: 0 });

    const row = page.locator(`#groups tr[data-group-id="${weekly.id}"]`);
    // Escape leaves the rename as it was, the focus back on its button.
    await row.locator('[data-action="rename"]').click();
    await page.keyboard.press('Escape');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).to.equal('Rename weekly');
    await page.keyboard.press('Enter');
    // The field is focused with the name selected: typing replaces it.
    await page.keyboard.type('weekly reports');
    await tab.nextCall('group_edit', () => page.keyboard.press('Enter'));
    await row.locator('strong').filter({ hasText: 'weekly reports' }).waitFor();
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
    expect(await focused(), 'the focus back on the row').to.equal('Rename weekly reports');
    expect((await groups()).find((g) => g.id === weekly.id)!.name).to.equal('weekly reports');

    await page.screenshot({ path: screenshotPath('groups.png'), fullPage: true });
    const asked = tab.confirmNext();
    await tab.nextCall('group_delete', () => page.locator(`#groups tr[data-group-id="${nightly.id}"] [data-action="delete"]`).click());
    expect(await asked).to.equal('Delete the group "nightly"? Its 2 jobs stay, in no group.');
    await page.locator('#groups-notice').filter({ hasText: 'Its 2 jobs are now in no group.' }).waitFor();
    expect((await groups()).map((g) => g.name)).to.deep.equal(['weekly reports']);
    expect((await jobs()).map((j) => [j.name, Number(j.group ?? 0)])).to.have.deep.members([['one', 0], ['two', 0], ['other', 0]]);
  });

  it('channels: one call to show; adds a channel of every type, the webhook\'s secret shown once', async () => {
    const { page } = tab;
    expect(await tab.open('/channels', '#channel-add-save')).to.deep.equal(['channel_list']);
    const add = async (type: string, name: string, fields: Record<string, string>) => {
      await page.locator('#channel-add-type').selectOption(type);
      await page.locator('#channel-add-name').fill(name);
      for (const [field, value] of Object.entries(fields)) await page.locator(`#channel-add-${field}`).fill(value);
      return tab.nextCall('channel_add', () => page.locator('#channel-add-save').click());
    };
    // The API's refusal goes to the field it names.
    await add('slack', 'bad', { url: 'not a url' });
    expect(await page.locator('#channel-add-url-error').textContent()).to.equal('url: is not a valid URL');
    await add('email', 'ops mail', { email: 'ops@example.com' });
    await add('webhook', 'receiver', { url: `${target.url}/hook` });
    secret = await page.locator('#channel-new-secret').inputValue();
    expect(secret).to.match(/^whsec_/);
    await add('slack', 'slack', { url: `${target.url}/slack/T000/B000/xyzsecret` });
    await add('discord', 'discord', { url: `${target.url}/discord/123/abc` });
    await add('teams', 'teams', { url: `${target.url}/teams/abc` });
    await add('telegram', 'telegram', { botToken: '123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ', chatId: '@tockalerts' });
    await page.locator('#channels tr[data-channel-id]').nth(5).waitFor();
    const stored = await channels();
    expect(stored.map((c) => [c.type, c.name])).to.deep.equal([['email', 'ops mail'], ['webhook', 'receiver'], ['slack', 'slack'], ['discord', 'discord'], ['teams', 'teams'], ['telegram', 'telegram']]);
    // Secrets as the API masks them: neither the chat URL's path nor the bot token is on the page.
    const text = await page.locator('#channels').textContent();
    expect(text).to.include('ops@example.com').and.not.include('xyzsecret').and.not.include('ABCDEFGHIJ');
    expect(text).not.to.include(secret);
  });

  it('channels: edits without the masked secret prefilled, sends a test, rotates a webhook secret, deletes after a confirmation', async () => {
    const { page } = tab;
    const byName = async (name: string) => (await channels()).find((c) => c.name === name)!;
    const slack = await byName('slack');
    const slackRow = page.locator(`#channels tr[data-channel-id="${slack.id}"]`);
    await slackRow.locator('[data-action="edit"]').click();
    const form = page.locator(`#channel-edit-${slack.id}`);
    expect(await form.locator('input[name="url"]').inputValue()).to.equal('');
    expect(await form.locator('input[name="url"]').getAttribute('type')).to.equal('password');
    expect(await form.locator('.hint').allTextContents()).to.include(`Now ${slack.url} (masked). Leave empty to keep it.`);
    await form.locator('input[name="name"]').fill('team chat');
    await form.locator('input[name="escalateAfter"]').fill('30');
    const edited = await tab.nextCall('channel_edit', () => page.locator(`#channel-edit-${slack.id}-save`).click());
    expect(edited.params).to.deep.equal({ id: Number(slack.id), name: 'team chat', escalateAfter: '30' });
    await slackRow.locator('strong').filter({ hasText: 'team chat' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'the focus back on the row').to.equal('Edit: team chat');
    expect(await byName('team chat')).to.include({ url: slack.url, escalateAfter: 30 });

    // The stored URL still delivers: the test message reaches the target.
    await tab.nextCall('channel_test', () => slackRow.locator('[data-action="test"]').click());
    await page.locator('#channels-notice').filter({ hasText: 'Test message delivered to team chat.' }).waitFor();
    expect(target.received.some((r) => r.url === '/slack/T000/B000/xyzsecret')).to.equal(true);
    const telegram = await byName('telegram');
    await tab.nextCall('channel_test', () => page.locator(`#channels tr[data-channel-id="${telegram.id}"] [data-action="test"]`).click());
    await page.locator('#channels-notice').filter({ hasText: 'delivered to telegram' }).waitFor();
    expect(target.received.some((r) => r.url.startsWith('/bot123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ/'))).to.equal(true);

    const webhook = await byName('receiver');
    expect(await page.locator('#channels tr[data-channel-id] [data-action="rotate"]').count(), 'only a webhook has a secret').to.equal(1);
    // Shown once: the next action (the edit above) took it off the page.
    expect(await page.locator('#channel-new-secret').count()).to.equal(0);
    const asked = tab.confirmNext();
    await tab.nextCall('channel_secret_rotate', () => page.locator(`#channels tr[data-channel-id="${webhook.id}"] [data-action="rotate"]`).click());
    expect(await asked).to.match(/^Give the webhook "receiver" a new signing secret\?/);
    await page.locator('#channel-new-secret-label').filter({ hasText: 'New signing secret of receiver' }).waitFor();
    const rotated = await page.locator('#channel-new-secret').inputValue();
    expect(rotated).to.match(/^whsec_/).and.not.equal(secret);
    expect(await page.locator('#channel-secret .hint').textContent()).to.match(/The previous secret also signs until /);
    await page.screenshot({ path: screenshotPath('channels.png'), fullPage: true });

    const mail = await byName('ops mail');
    const refused = tab.confirmNext(false);
    await page.locator(`#channels tr[data-channel-id="${mail.id}"] [data-action="delete"]`).click();
    expect(await refused).to.equal('Delete the channel "ops mail" (Email)? It receives no more notifications; this cannot be undone.');
    expect(await byName('ops mail'), 'kept when the confirmation is dismissed').to.not.equal(undefined);
    const accepted = tab.confirmNext();
    await tab.nextCall('channel_delete', () => page.locator(`#channels tr[data-channel-id="${mail.id}"] [data-action="delete"]`).click());
    await accepted;
    await page.locator(`#channels tr[data-channel-id="${mail.id}"]`).waitFor({ state: 'detached' });
    expect((await channels()).map((c) => c.name)).to.deep.equal(['receiver', 'team chat', 'discord', 'teams', 'telegram']);
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px, groups and channels with a form open: no horizontal scroll, one h1, no serious or critical axe violation`, async () => {
      const { page } = tab;
      await page.setViewportSize({ width, height: 900 });
      await tab.open('/groups', '#groups tr[data-group-id]');
      await page.locator('#groups [data-action="rename"]').first().click();
      const groupsPage = await tab.layout();
      await tab.open('/channels', '#channels tr[data-channel-id]');
      await page.locator('#channels [data-action="edit"]').last().click();
      const channelsPage = await tab.layout();
      console.log(`      groups: scrollWidth ${groupsPage.scroll}, axe ${groupsPage.all.map((v) => `${v.id}(${v.impact})`).join(' ') || 'none'}; channels: scrollWidth ${channelsPage.scroll}, axe ${channelsPage.all.map((v) => `${v.id}(${v.impact})`).join(' ') || 'none'}`);
      for (const [name, l] of [['groups', groupsPage], ['channels', channelsPage]] as const) {
        expect(l.scroll, `${name}: scroll width`).to.be.at.most(width);
        expect(l.h1, `${name}: h1`).to.equal(1);
        expect(l.bad, name).to.deep.equal([]);
      }
      if (width === 390) await page.screenshot({ path: screenshotPath('channels-390.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    });
  }

  it('made no call that was refused, and wrote nothing to the console', () => {
    expect(tab.calls.filter((c) => c.http !== 200 && c.http !== 400)).to.deep.equal([]);
    expect(tab.problems).to.deep.equal([]);
  });
});
