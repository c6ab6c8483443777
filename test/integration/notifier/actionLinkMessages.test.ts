import { expect } from 'chai';
import { LINKED_JOBS, type Channel, type ChannelType, type Trigger } from '../../../shared/notify/index.ts';
import { createSenders } from '../../../services/notifier/senders.ts';
import { startReceiver, testSecrets } from './harness.ts';

const NOW = Date.UTC(2026, 10, 23, 12);
const trigger = (id: number): Trigger => ({
  key: `r${id}:failed`,
  kind: 'failed',
  reasons: ['the run failed'],
  at: NOW,
  fail: 1,
  job: { id, accountId: 1, name: `job ${id}`, url: `https://example.com/${id}`, group: null, groupName: '', failureThreshold: 20, channels: null },
  execution: { runId: `r${id}`, time: NOW / 1000, failed: true, httpStatus: 502, error: 'HTTP 502', output: '', downloaded: 0, executionTime: 1 },
});
const channel = (type: ChannelType, url: string): Channel => ({
  id: 3,
  accountId: 1,
  type,
  name: type,
  address: type === 'telegram' ? { botToken: testSecrets.seal('123:abc'), chatId: '42' } : { url: testSecrets.seal(url) },
  secret: type === 'webhook' ? testSecrets.seal('whsec_x') : '',
  previousSecret: null,
  escalateAfter: 0,
  enabled: true,
  failures: 0,
  lastError: '',
  deleted: false,
  createdAt: NOW,
});

/** Links as the notifier would make them, counted: a fresh set per job and message. */
function fakeLinks() {
  const made: number[] = [];
  return {
    made,
    linksFor(accountId: number, jobId: number) {
      made.push(jobId);
      const url = (a: string) => `https://tock.example.com/a/${a}-${accountId}-${jobId}-${made.length}`;
      return { pause1h: url('pause1h'), run: url('run'), logs: url('logs'), silence: url('silence') };
    },
  };
}

/** Every kind of channel, sent by the senders to a real receiver: the links of each job, for the first LINKED_JOBS jobs only. */
describe('notifier senders: action links in every kind of message', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => (receiver = await startReceiver()));
  after(async () => receiver?.close());

  const send = async (type: ChannelType, triggers: Trigger[], withLinks = true) => {
    const links = fakeLinks();
    const senders = createSenders({ allowNetworks: ['127.0.0.0/8'], secrets: testSecrets, publicUrl: 'https://tock.example.com', telegramApi: receiver.url, links: withLinks ? links : undefined });
    try {
      const outcome = await senders.send(channel(type, `${receiver.url}/${type}`), triggers, NOW, 'msg_1');
      expect(outcome.ok, outcome.error).to.equal(true);
      return { body: receiver.received.at(-1)!.body, made: links.made };
    } finally {
      await senders.close();
    }
  };

  it('a webhook: `actions` at the top and in each of the first LINKED_JOBS notifications, one set per job', async () => {
    const triggers = Array.from({ length: 30 }, (_, i) => trigger(i + 1));
    const { body, made } = await send('webhook', [...triggers, trigger(1)]);
    const message = JSON.parse(body);
    expect(made).to.deep.equal(Array.from({ length: LINKED_JOBS }, (_, i) => i + 1));
    expect(message.actions).to.deep.equal(message.notifications[0].actions);
    expect(message.notifications.filter((n: { actions?: unknown }) => n.actions)).to.have.length(LINKED_JOBS + 1);
    expect(message.notifications[30].actions).to.deep.equal(message.notifications[0].actions);
    expect(message.notifications[LINKED_JOBS]).to.not.have.property('actions');
  });

  it('Slack, Discord, Teams and Telegram show each link by its name', async () => {
    const slack = (await send('slack', [trigger(9)])).body;
    for (const [action, label] of [['pause1h', 'Pause for 1 hour'], ['run', 'Run now'], ['silence', 'Silence until it recovers']]) expect(slack).to.include(`<https://tock.example.com/a/${action}-1-9-1|${label}>`);
    expect(slack).to.include('<https://tock.example.com/a/logs-1-9-1|view logs>');
    const discord = JSON.parse((await send('discord', [trigger(9)])).body);
    expect(discord.embeds[0].url).to.equal('https://tock.example.com/a/logs-1-9-1');
    expect(discord.embeds[0].fields.map((f: { value: string }) => f.value)).to.include('[Run now](https://tock.example.com/a/run-1-9-1)');
    const teams = JSON.parse((await send('teams', [trigger(9)])).body);
    expect(teams.attachments[0].content.actions.map((a: { title: string }) => a.title)).to.deep.equal(['View logs', 'Pause for 1 hour', 'Run now', 'Silence until it recovers']);
    const telegram = JSON.parse((await send('telegram', [trigger(9)])).body);
    expect(telegram.text).to.include('<a href="https://tock.example.com/a/silence-1-9-1">Silence until it recovers</a>');
  });

  it('no links when the notifier has none to give (no TOCK_PUBLIC_URL): the logs link of the API as before', async () => {
    const { body, made } = await send('webhook', [trigger(4)], false);
    expect(made).to.deep.equal([]);
    expect(JSON.parse(body)).to.not.have.property('actions');
    const slack = (await send('slack', [trigger(4)], false)).body;
    expect(slack).to.include('/api/v1/cron_logs?id=4').and.not.include('/a/');
  });
});
