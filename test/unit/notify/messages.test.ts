import { expect } from 'chai';
import { discordMessage, emailMessage, maskCredentials, slackMessage, subject, teamsMessage, telegramMessage, webhookMessage, type Trigger } from '../../../shared/notify/index.ts';

const NOW = Date.UTC(2026, 10, 23, 12);
const trigger = (i: number, over: Partial<Trigger['execution']> = {}): Trigger => ({
  key: `r${i}:failed`,
  kind: 'failed',
  reasons: ['the run failed'],
  at: NOW,
  fail: 1,
  job: { id: i, accountId: 1, name: `job <${i}> & co`, url: `https://example.com/${i}`, group: null, groupName: '', failureThreshold: 20, channels: null },
  execution: { runId: `r${i}`, time: NOW / 1000, failed: true, httpStatus: 502, error: 'E'.repeat(2000), output: 'O'.repeat(1000), downloaded: 1000, executionTime: 1.25, ...over },
});
const many = Array.from({ length: 500 }, (_, i) => trigger(i + 1));
const ctx = { now: NOW, deliveryId: 'msg_1', publicUrl: 'https://tock.example.com/' };

describe('notification messages (shared/notify)', () => {
  it('masks the credentials of a URL, keeps everything else', () => {
    expect(maskCredentials('https://user:pass@example.com:8443/p?q=1')).to.equal('https://***:***@example.com:8443/p?q=1');
    expect(maskCredentials('https://token@example.com/')).to.equal('https://***@example.com/');
    expect(maskCredentials('https://example.com/a')).to.equal('https://example.com/a');
  });

  it('subjects: the job and what happened, or a count by kind', () => {
    expect(subject([trigger(1)])).to.equal('Tock: "job <1> & co" (#1) failed');
    const onHost = (t: Trigger, host: string): Trigger => ({ ...t, job: { ...t.job, url: `https://${host}/x` } });
    expect(subject([onHost(trigger(1), 'a.example'), { ...trigger(2), kind: 'okay' }, onHost(trigger(3), 'b.example')])).to.equal('Tock: 3 cron jobs need attention (2 failed, 1 is okay again)');
    // Two failing jobs or more against one host: the subject names it.
    expect(subject([trigger(1), trigger(2), onHost(trigger(3), 'b.example')])).to.equal('Tock: example.com: 2 jobs failing, 1 more cron job needs attention');
    expect(subject(many)).to.equal('Tock: example.com: 500 jobs failing');
  });

  it('500 jobs in one message stay within each chat service\'s documented limits', () => {
    const slack = JSON.parse(slackMessage(many, { url: 'https://hooks.slack.com/x' }, ctx).body);
    expect(slack.blocks.length).to.be.at.most(50);
    for (const b of slack.blocks) if (b.type === 'section') expect(b.text.text.length).to.be.at.most(3000);
    expect(slack.blocks.at(-1).elements[0].text).to.equal('…and 490 more');

    const discord = JSON.parse(discordMessage(many, { url: 'https://discord.com/api/webhooks/1/x' }, ctx).body);
    expect(discord.embeds.length).to.be.within(1, 10);
    const embedText = discord.embeds.reduce((n: number, e: any) => n + e.title.length + e.description.length + e.fields.reduce((m: number, f: any) => m + f.name.length + f.value.length, 0), 0);
    expect(embedText).to.be.at.most(6000);
    expect(discord.content.length).to.be.at.most(2000);
    expect(discord.content).to.match(/…and \d+ more$/);

    const telegram = JSON.parse(telegramMessage(many, { botToken: '1:x', chatId: '5' }, ctx).body);
    expect(telegram.text.length).to.be.at.most(4096);
    expect(telegram.text.match(/<b>/g)!.length).to.equal(telegram.text.match(/<\/b>/g)!.length);
    expect(telegram.text).to.include('&lt;1&gt; &amp; co');
    expect(telegram.text).to.match(/…and \d+ more$/);

    const teams = JSON.parse(teamsMessage(many, { url: 'https://x.example/' }, ctx).body);
    expect(teams.attachments[0].content.body.filter((b: any) => b.type === 'FactSet')).to.have.length(10);
  });

  it('email and webhook carry every job of the message', () => {
    const email = emailMessage(many, ctx);
    expect(email.text.match(/^Cron job /gm)).to.have.length(500);
    expect(email.html).to.include('<h3>Cron job &quot;job &lt;1&gt; &amp; co&quot; (#1) failed</h3>');
    expect(email.html).to.include('<a href="https://tock.example.com/api/v1/cron_logs?id=1">');
    const hook = JSON.parse(webhookMessage(many, { url: 'https://x.example/' }, ['k'], ctx).body);
    expect(hook.count).to.equal(500);
    expect(hook.notifications).to.have.length(500);
  });

  it('a success is status 0, "okay"', () => {
    const body = JSON.parse(webhookMessage([{ ...trigger(1, { failed: false, httpStatus: 200, error: '' }), kind: 'okay' }], { url: 'https://x.example/' }, ['k'], ctx).body);
    expect(body).to.include({ status: 0, message: 'okay', event: 'okay', httpStatus: 200 });
  });
});
