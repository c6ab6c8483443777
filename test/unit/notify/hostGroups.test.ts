import { expect } from 'chai';
import { discordMessage, emailMessage, hostGroups, hostLine, sinceText, slackMessage, teamsMessage, telegramMessage, webhookMessage, type Trigger } from '../../../shared/notify/index.ts';

const NOW = Date.UTC(2026, 10, 23, 10, 30);
const T = NOW / 1000;
const failure = (id: number, url: string, error = 'connect ECONNREFUSED 203.0.113.7:443', over: Partial<Trigger> = {}): Trigger => ({
  key: `r${id}:failed`,
  kind: 'failed',
  reasons: ['the run failed'],
  at: NOW,
  fail: 1,
  job: { id, accountId: 1, name: `job ${id}`, url, group: null, groupName: '', failureThreshold: 20, channels: null },
  execution: { runId: `r${id}`, time: T, failed: true, httpStatus: 0, error, output: '', downloaded: 0, executionTime: 0.1 },
  ...over,
});
const ctx = { now: NOW, deliveryId: 'msg_1' };

describe('failures grouped by target host (shared/notify hostGroups)', () => {
  it('groups the failing jobs of a message by host (port included, case folded), largest first; one job on a host is no group', () => {
    const triggers = [
      failure(1, 'https://api.example.com/a'),
      failure(2, 'https://API.example.com/b?x=1'),
      failure(3, 'https://***:***@api.example.com/c'),
      failure(4, 'https://db.example.com:8443/x', 'HTTP status 503'),
      failure(5, 'https://db.example.com:8443/y', 'HTTP status 503'),
      failure(6, 'https://alone.example.com/'),
      { ...failure(7, 'https://api.example.com/ok'), kind: 'okay' as const, execution: { ...failure(7, '').execution, failed: false, error: '' } },
      failure(8, 'not a url'),
    ];
    const groups = hostGroups(triggers);
    expect(groups.map((g) => [g.host, g.jobs])).to.deep.equal([['api.example.com', [1, 2, 3]], ['db.example.com:8443', [4, 5]]]);
  });

  it('counts a job once however many of its runs the message holds; since is the earliest failure known; the error most got', () => {
    const groups = hostGroups([
      failure(1, 'https://h.example/', 'HTTP status 502', { failingSince: T - 600 }),
      failure(1, 'https://h.example/', 'HTTP status 502'),
      failure(2, 'https://h.example/', 'timeout'),
      failure(3, 'https://h.example/', 'HTTP status 502'),
    ]);
    expect(groups).to.deep.equal([{ host: 'h.example', jobs: [1, 2, 3], since: T - 600, error: 'HTTP status 502' }]);
    expect(hostLine(groups[0]!, NOW)).to.equal('h.example: 3 jobs failing since 10:20 UTC, HTTP status 502');
  });

  it('says the date of a failure more than a day old, and leaves out an error nobody gave', () => {
    expect(sinceText(T - 60, NOW)).to.equal('10:29 UTC');
    expect(sinceText(T - 2 * 86_400, NOW)).to.equal('2026-11-21 10:30 UTC');
    expect(hostLine({ host: 'h.example', jobs: [1, 2], since: T, error: '' }, NOW)).to.equal('h.example: 2 jobs failing since 10:30 UTC');
  });

  it('every format leads with the host line; the webhook carries the groups as data', () => {
    const outage = Array.from({ length: 50 }, (_, i) => failure(i + 1, `https://api.example.com/job/${i + 1}`));
    const line = 'api.example.com: 50 jobs failing since 10:30 UTC, connect ECONNREFUSED 203.0.113.7:443';
    const email = emailMessage(outage, ctx);
    expect(email.subject).to.equal('Tock: api.example.com: 50 jobs failing');
    expect(email.text.startsWith(`By host:\n  ${line}\n\n`)).to.equal(true);
    expect(email.html).to.include(`<h3>By host</h3><ul><li>${line}</li></ul>`);
    const hook = JSON.parse(webhookMessage(outage, { url: 'https://r.example/' }, ['k'], ctx).body);
    expect(hook.hosts).to.deep.equal([{ host: 'api.example.com', count: 50, jobs: outage.map((t) => t.job.id), since: T, error: 'connect ECONNREFUSED 203.0.113.7:443' }]);
    expect(hook.notifications).to.have.length(50);
    const slack = JSON.parse(slackMessage(outage, { url: 'https://hooks.slack.com/x' }, ctx).body);
    expect(slack.blocks[1].text.text).to.equal(`*By host*\n• ${line}`);
    expect(JSON.parse(discordMessage(outage, { url: 'https://discord.com/api/webhooks/1/x' }, ctx).body).content.split('\n').slice(0, 2)).to.deep.equal(['Tock: api.example.com: 50 jobs failing', line]);
    expect(JSON.parse(teamsMessage(outage, { url: 'https://t.example/' }, ctx).body).attachments[0].content.body[1].text).to.equal(line);
    expect(JSON.parse(telegramMessage(outage, { botToken: '1:x', chatId: '5' }, ctx).body).text.split('\n').slice(0, 2)).to.deep.equal(['<b>Tock: api.example.com: 50 jobs failing</b>', line]);
    // A message without a host of two failing jobs has no host section, and an empty list in the webhook.
    const single = [failure(1, 'https://a.example/'), failure(2, 'https://b.example/')];
    expect(emailMessage(single, ctx).text).to.not.include('By host');
    expect(JSON.parse(webhookMessage(single, { url: 'https://r.example/' }, ['k'], ctx).body).hosts).to.deep.equal([]);
  });

  it('a chat shows at most 10 host lines, then how many more hosts', () => {
    const spread = Array.from({ length: 24 }, (_, i) => failure(i + 1, `https://h${Math.floor(i / 2)}.example/`));
    const lines = JSON.parse(telegramMessage(spread, { botToken: '1:x', chatId: '5' }, ctx).body).text.split('\n');
    expect(lines.slice(1, 12).filter((l: string) => / jobs failing since /.test(l))).to.have.length(10);
    expect(lines[11]).to.equal('…and 2 more hosts');
    expect(emailMessage(spread, ctx).text.match(/ jobs failing since /g)).to.have.length(12);
  });
});
