import { expect } from 'chai';
import { FakeClock } from '../../../shared/clock.ts';
import { apiClient, ok } from '../../support/api.ts';
import { hasChromium, CHROMIUM, launchChromium } from '../../support/browser.ts';
import { drive } from '../../support/drive.ts';
import { startTestSystem } from '../../support/embedded.ts';
import { streamEvents } from '../../support/targets.ts';
import { startTarget } from '../../support/target.ts';
import { decodeQp, startReceiver, startSmtp } from '../../integration/notifier/harness.ts';

const PUBLIC = 'https://tock.example.com/cron';
const ACTIONS = ['pause1h', 'run', 'logs', 'silence'] as const;
type Links = Record<(typeof ACTIONS)[number], string>;

/**
 * Action links through the public parts (embedded mode, a fake clock that starts now): a real
 * failing target, a real webhook receiver and a real SMTP peer get the notifications, and the
 * test follows their links against the gateway as a browser and a mail scanner would.
 */
describe('action links in notifications (embedded mode)', function () {
  this.timeout(120_000);
  const clock = new FakeClock(Date.now());
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let target: Awaited<ReturnType<typeof startTarget>>;

  before(async () => {
    receiver = await startReceiver();
    smtp = await startSmtp();
    target = await startTarget((req) => (req.url.startsWith('/fail') ? { status: 500, body: 'SECRET-OUTPUT of the failing run' } : {}), { clock });
    system = await startTestSystem({
      clock,
      env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_PUBLIC_URL: PUBLIC, SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_TLS: 'off', SMTP_FROM: 'tock@example.com' },
    });
  });
  after(async () => {
    await system?.destroy();
    await target?.close();
    await receiver?.close();
    await smtp?.close();
  });

  /** A link of a notification, followed at the gateway the test started (Tock behind its public URL). */
  const local = (link: string) => {
    expect(link.startsWith(`${PUBLIC}/a/`), link).to.equal(true);
    return `${system.baseUrl}${link.slice(PUBLIC.length)}`;
  };
  const tokenOf = (link: string) => link.slice(`${PUBLIC}/a/`.length);
  const get = async (link: string) => {
    const r = await fetch(local(link), { redirect: 'manual' });
    return { status: r.status, headers: r.headers, html: await r.text() };
  };
  const post = async (token: string) => {
    const r = await fetch(`${system.baseUrl}/a/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString(), redirect: 'manual' });
    return { status: r.status, headers: r.headers, html: await r.text() };
  };
  const hooks = (path: string) => receiver.received.filter((r) => r.url === path).map((r) => JSON.parse(r.body));
  /** Everything the store holds about a job: what a GET must leave as it was. */
  const stateOf = (id: number) => ({ job: streamEvents(system.dataDir, `cronjob-${id}`).length, notify: streamEvents(system.dataDir, `notifyjob-${id}`).length });

  /** A failing job whose first failure is notified to a webhook channel at `/<name>`; its notification. */
  async function failingJob(name: string) {
    const hook = await ok(system.api.call('channel_add', { type: 'webhook', url: `${receiver.url}/${name}` }));
    const job = await ok(system.api.call('cron_add', { name, url: `${target.url}/fail/${name}`, expression: 'manual', notifyChannels: String(hook.id) }));
    await ok(system.api.call('cron_run', { id: job.id }));
    const [message] = await drive(clock, () => hooks(`/${name}`).length > 0 && hooks(`/${name}`), `the notification of ${name}`, { maxMs: 120_000 });
    return { job, message, hook };
  }

  it('a webhook carries four links per job; a GET shows what each would do and changes nothing', async () => {
    const { job, message } = await failingJob('nightly');
    const links: Links = message.actions;
    expect(Object.keys(links).sort()).to.deep.equal([...ACTIONS].sort());
    expect(message.notifications[0].actions).to.deep.equal(links);
    const before = stateOf(job.id);
    const runs = target.received.length;
    const record = await ok(system.api.call('cron_get', { id: job.id }));
    for (const action of ACTIONS) {
      expect(links[action]).to.match(/^https:\/\/tock\.example\.com\/cron\/a\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      // Twice, as a scanner and then a person would open it.
      for (let i = 0; i < 2; i++) {
        const page = await get(links[action]);
        expect(page.status, action).to.equal(200);
        expect(page.headers.get('content-security-policy')).to.match(/^default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'$/);
        expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
        expect(page.headers.get('cache-control')).to.equal('no-store');
        expect(page.html).to.include(`&quot;nightly&quot; (cron job #${job.id})`);
        if (action === 'logs') {
          expect(page.html).to.not.include('<form');
          expect(page.html).to.include('<td>failed</td>').and.include('<td>500</td>');
          // The output stays out: the page shows no more than a notification does.
          expect(page.html).to.not.include('SECRET-OUTPUT');
        } else expect(page.html).to.include('<form method="post" action="./">').and.include(`value="${tokenOf(links[action])}"`);
      }
    }
    expect(stateOf(job.id)).to.deep.equal(before);
    expect(target.received.length).to.equal(runs);
    expect(record).to.include({ status: 0, pausedUntil: null });
    expect(await ok(system.api.call('cron_get', { id: job.id }))).to.include({ status: 0, pausedUntil: null });
    // A logs link is read-only: posting it acts on nothing and leads back to its page.
    const logs = await post(tokenOf(links.logs));
    expect(logs.status).to.equal(302);
    expect(logs.headers.get('location')).to.equal(`./${tokenOf(links.logs)}`);
    expect(stateOf(job.id)).to.deep.equal(before);
  });

  it('each acting link works once: pause for an hour, run now (at the real target), silence until recovery', async () => {
    const { job, message } = await failingJob('hourly');
    const links: Links = message.actions;

    const paused = await post(tokenOf(links.pause1h));
    expect(paused.status).to.equal(200);
    expect(paused.headers.get('cache-control')).to.equal('no-store');
    expect(paused.html).to.include('Paused until');
    const record = await ok(system.api.call('cron_get', { id: job.id }));
    expect(record.status).to.equal(5);
    expect(record.pausedUntil).to.be.within(Math.floor(clock.now() / 1000) + 3590, Math.floor(clock.now() / 1000) + 3600);
    const again = await post(tokenOf(links.pause1h));
    expect(again.status).to.equal(410);
    expect(again.html).to.include('Link already used');
    expect((await get(links.pause1h)).status).to.equal(410);

    await ok(system.api.call('cron_enable', { id: job.id }));
    const calls = () => target.received.filter((r) => r.url === '/fail/hourly').length;
    const before = calls();
    const ran = await post(tokenOf(links.run));
    expect(ran.status).to.equal(200);
    await drive(clock, () => calls() === before + 1, 'the run at the target');
    expect((await post(tokenOf(links.run))).status).to.equal(410);

    const silenced = await post(tokenOf(links.silence));
    expect(silenced.status).to.equal(200);
    const snoozes = streamEvents(system.dataDir, `notifyjob-${job.id}`).filter((e) => e.type === 'NotificationsSnoozed');
    expect(snoozes.map((e) => e.data.until)).to.deep.equal([null]);
    expect((await post(tokenOf(links.silence))).html).to.include('Link already used');
    // Recorded once, by link id, for every replica to see.
    expect(streamEvents(system.dataDir, `actionlink-${JSON.parse(Buffer.from(tokenOf(links.run).split('.')[1]!, 'base64url').toString()).n}`)).to.have.length(1);
  });

  it('refuses a tampered link, a link changed to another action, account or job, and a link from nowhere, and changes nothing', async () => {
    const { job, message } = await failingJob('weekly');
    const bob = await system.adminClient.createAccount({ name: 'bob', timezone: 'UTC', jobLimit: 0 });
    const bobJob = await ok(apiClient(system.baseUrl, bob.token).call('cron_add', { url: `${target.url}/bob`, expression: 'manual' }));
    const links: Links = message.actions;
    const [kid, payload, mac] = tokenOf(links.pause1h).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forge = (change: Record<string, unknown>) => `${kid}.${Buffer.from(JSON.stringify({ ...claims, ...change })).toString('base64url')}.${mac}`;
    const flipped = `${kid}.${payload}.${mac.slice(0, 10)}${mac[10] === 'A' ? 'B' : 'A'}${mac.slice(11)}`;
    const before = { mine: stateOf(job.id), theirs: stateOf(bobJob.id) };
    const runs = target.received.length;
    for (const token of [forge({ k: 'run' }), forge({ k: 'silence' }), forge({ a: Number(bob.account!.id) }), forge({ j: bobJob.id, a: Number(bob.account!.id) }), forge({ e: claims.e + 86_400 }), flipped, 'nonsense', `zz.${payload}.${mac}`]) {
      const shown = await get(`${PUBLIC}/a/${token}`);
      expect(shown.status, token).to.equal(404);
      expect(shown.html).to.include('Link not valid');
      const posted = await post(token);
      expect(posted.status, token).to.equal(404);
      expect(posted.html).to.include('Link not valid').and.not.include('weekly');
    }
    expect((await post('')).status).to.equal(404);
    expect({ mine: stateOf(job.id), theirs: stateOf(bobJob.id) }).to.deep.equal(before);
    expect(target.received.length).to.equal(runs);
    // The genuine link still works after all that.
    expect((await post(tokenOf(links.pause1h))).status).to.equal(200);
  });

  it('in a real browser: the page loads under its CSP without a violation, and its button does the action', async function () {
    if (!hasChromium()) {
      // .ci/run installs Chromium: there a missing browser is a failure, not a skip.
      if (process.env.CI === 'true') throw new Error(`no ${CHROMIUM} under CI`);
      console.log(`      (skipped: needs ${CHROMIUM}; apt-get install chromium, as .ci/run does)`);
      this.skip();
    }
    const { job, message } = await failingJob('browsed');
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(local(message.actions.silence));
      expect(await page.locator('h1').textContent()).to.equal('Silence until it recovers');
      // The one inline style applies (allowed by its hash), nothing else loads.
      expect(await page.locator('body').evaluate((b) => getComputedStyle(b).maxWidth)).to.equal('640px');
      expect(streamEvents(system.dataDir, `notifyjob-${job.id}`).filter((e) => e.type === 'NotificationsSnoozed')).to.have.length(0);
      await Promise.all([page.waitForURL(`${system.baseUrl}/a/`), page.locator('button').click()]);
      expect(await page.locator('h1').textContent()).to.equal('Done');
      expect(problems).to.deep.equal([]);
      expect(streamEvents(system.dataDir, `notifyjob-${job.id}`).filter((e) => e.type === 'NotificationsSnoozed')).to.have.length(1);
    } finally {
      await browser.close();
    }
  });

  it('email carries the links too, and every link expires after 24 hours', async () => {
    const { job, message } = await failingJob('daily');
    const mail = await ok(system.api.call('channel_add', { type: 'email', email: 'ops@example.com' }));
    const mailed = await ok(system.api.call('cron_add', { name: 'mailed', url: `${target.url}/fail/mailed`, expression: 'manual', notifyChannels: String(mail.id) }));
    await ok(system.api.call('cron_run', { id: mailed.id }));
    // The account is no longer quiet: its next message waits for the merge window.
    const raw = await drive(clock, () => smtp.mails.find((m) => decodeQp(m.raw).includes('"mailed"'))?.raw, 'the email', { maxMs: 120_000, stepMs: 1000 });
    const text = decodeQp(raw);
    for (const label of ['Pause for 1 hour', 'Run now', 'Silence until it recovers', 'Logs']) expect(text).to.match(new RegExp(`${label}: ${PUBLIC}/a/[A-Za-z0-9_.-]+`));

    const links: Links = message.actions;
    const before = stateOf(job.id);
    // Time jumps (no timer fires on the way): a minute before the day is up the links still work, at the day's end none does.
    const expires = JSON.parse(Buffer.from(tokenOf(links.run).split('.')[1]!, 'base64url').toString()).e * 1000;
    // A day after the notification was sent: the failed run it tells of, plus the merge window it waited (60 s).
    expect(expires - message.time * 1000).to.be.within(24 * 3600_000, 24 * 3600_000 + 70_000);
    clock.set(expires - 60_000);
    expect((await get(links.logs)).status).to.equal(200);
    expect((await get(links.run)).status).to.equal(200);
    clock.set(expires);
    for (const action of ACTIONS) {
      const page = await get(links[action]);
      expect(page.status, action).to.equal(410);
      expect(page.html).to.include('Link expired');
      if (action !== 'logs') expect((await post(tokenOf(links[action]))).status).to.equal(410);
    }
    expect(stateOf(job.id)).to.deep.equal(before);
  });
});

describe('action links without TOCK_PUBLIC_URL (embedded mode)', function () {
  this.timeout(60_000);
  it('a notification carries none, and /a/ pages refuse every token', async () => {
    const receiver = await startReceiver();
    const target = await startTarget(() => ({ status: 500 }));
    const system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    try {
      const hook = await ok(system.api.call('channel_add', { type: 'webhook', url: `${receiver.url}/plain` }));
      const job = await ok(system.api.call('cron_add', { url: `${target.url}/x`, expression: 'manual', notifyChannels: String(hook.id) }));
      await ok(system.api.call('cron_run', { id: job.id }));
      const started = Date.now();
      while (!receiver.received.length && Date.now() - started < 30_000) await new Promise((r) => setTimeout(r, 50));
      const message = JSON.parse(receiver.received[0]!.body);
      expect(message).to.include({ id: job.id, status: 1 });
      expect(message).to.not.have.property('actions');
      expect(message.notifications[0]).to.not.have.property('actions');
      expect(receiver.received[0]!.body).to.not.include('/a/');
      const r = await fetch(`${system.baseUrl}/a/abc.def.${'x'.repeat(43)}`);
      expect(r.status).to.equal(404);
    } finally {
      await system.destroy();
      await target.close();
      await receiver.close();
    }
  });
});
