import { expect } from 'chai';
import { createJob, execute, settle, startHarness, startReceiver, type Received } from './harness.ts';
import { nth } from '../../support/nth.ts';
import { waitFor } from '../../support/waitFor.ts';

type Harness = Awaited<ReturnType<typeof startHarness>>;

/**
 * Each chat service receives the request its own documentation describes: Slack incoming webhooks
 * (`text` + Block Kit `blocks`), Discord webhooks (`content` + `embeds`), Teams Workflows webhooks
 * (a `message` with an Adaptive Card attachment), Telegram's Bot API `sendMessage`.
 */
describe('notifier chat formats (local receivers standing in for Slack, Discord, Teams, Telegram)', function () {
  this.timeout(20_000);
  let h: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  afterEach(async () => {
    await h?.destroy();
    await receiver?.close();
  });

  /** One failing job (credentials in its URL) notified to one channel of this type; the request it got. */
  async function notifyOnce(type: string, address: (url: string) => Record<string, string>, extra: Partial<Parameters<typeof startHarness>[0]> = {}): Promise<Received> {
    receiver = await startReceiver();
    h = await startHarness({ windowMs: 0, publicUrl: 'https://tock.example.com', telegramApi: receiver.url, ...extra });
    await h.notifier.channels.add(1, { type, name: type, address: address(receiver.url) });
    await createJob(h.store, 9, { name: 'price feed', url: 'https://bob:s3cr3t@feeds.example.com/prices' });
    await settle(100);
    await execute(h.bus, 9, true);
    const request = nth(
      await waitFor(async () => {
        await h.advance(0);
        return receiver.received.length > 0 && receiver.received;
      }, 'a request at the receiver'),
    );
    await settle(100);
    expect(receiver.received).to.have.length(1);
    expect(request.method).to.equal('POST');
    expect(request.headers['content-type']).to.equal('application/json');
    expect(request.body).to.not.include('s3cr3t');
    return request;
  }

  it('Slack: text (the fallback) and header + mrkdwn section blocks with status, error, time and the logs link', async () => {
    const request = await notifyOnce('slack', (url) => ({ url: `${url}/services/T000/B000/XXXX` }));
    expect(request.url).to.equal('/services/T000/B000/XXXX');
    const body = JSON.parse(request.body);
    expect(body.text).to.equal('Tock: "price feed" (#9) failed');
    expect(body.blocks[0]).to.deep.equal({ type: 'header', text: { type: 'plain_text', text: 'Tock: "price feed" (#9) failed' } });
    expect(body.blocks[1].type).to.equal('section');
    expect(body.blocks[1].text.type).to.equal('mrkdwn');
    const text: string = body.blocks[1].text.text;
    expect(text).to.include('*HTTP status:* 503');
    expect(text).to.include('*Error:* HTTP status 503');
    expect(text).to.include('*When:* 2026-11-23T12:00:00Z');
    expect(text).to.include('*URL:* https://***:***@feeds.example.com/prices');
    expect(text).to.include('<https://tock.example.com/api/v1/cron_logs?id=9|view logs>');
    expect(text.length).to.be.at.most(3000);
  });

  it('Discord: content plus an embed with title, description, colour, ISO timestamp, url and fields', async () => {
    const request = await notifyOnce('discord', (url) => ({ url: `${url}/api/webhooks/123/abc` }));
    const body = JSON.parse(request.body);
    expect(body.content).to.equal('Tock: "price feed" (#9) failed');
    expect(body.allowed_mentions).to.deep.equal({ parse: [] });
    expect(body.embeds).to.have.length(1);
    const [embed] = body.embeds;
    expect(embed).to.include({ title: 'Cron job "price feed" (#9) failed', description: 'the run failed', color: 0xd32f2f, timestamp: '2026-11-23T12:00:00.000Z', url: 'https://tock.example.com/api/v1/cron_logs?id=9' });
    expect(embed.fields).to.deep.include({ name: 'HTTP status', value: '503', inline: true });
    expect(embed.fields).to.deep.include({ name: 'Error', value: 'HTTP status 503', inline: false });
    for (const f of embed.fields) expect(f.value.length).to.be.at.most(1024);
  });

  it('Teams: a message whose attachment is an Adaptive Card with a FactSet and an open-URL action', async () => {
    const request = await notifyOnce('teams', (url) => ({ url: `${url}/workflows/xyz/triggers/manual/paths/invoke?sig=abc` }));
    expect(request.url).to.equal('/workflows/xyz/triggers/manual/paths/invoke?sig=abc');
    const body = JSON.parse(request.body);
    expect(body.type).to.equal('message');
    expect(body.attachments).to.have.length(1);
    const [attachment] = body.attachments;
    expect(attachment.contentType).to.equal('application/vnd.microsoft.card.adaptive');
    expect(attachment.contentUrl).to.equal(null);
    const card = attachment.content;
    expect(card).to.include({ type: 'AdaptiveCard', version: '1.4', $schema: 'http://adaptivecards.io/schemas/adaptive-card.json' });
    expect(card.body[0]).to.include({ type: 'TextBlock', text: 'Tock: "price feed" (#9) failed', weight: 'Bolder', wrap: true });
    const facts = card.body.find((b: { type: string }) => b.type === 'FactSet').facts;
    expect(facts).to.deep.include({ title: 'HTTP status', value: '503' });
    expect(card.actions).to.deep.equal([{ type: 'Action.OpenUrl', title: 'View logs', url: 'https://tock.example.com/api/v1/cron_logs?id=9' }]);
  });

  it('Telegram: sendMessage to /bot<token>/ with chat_id, HTML text and parse_mode', async () => {
    const request = await notifyOnce('telegram', () => ({ botToken: '123456:AAbbCCddEEffGGhhIIjjKKllMM', chatId: '-1001234567890' }));
    expect(request.url).to.equal('/bot123456:AAbbCCddEEffGGhhIIjjKKllMM/sendMessage');
    const body = JSON.parse(request.body);
    expect(body.chat_id).to.equal('-1001234567890');
    expect(body.parse_mode).to.equal('HTML');
    expect(body.link_preview_options).to.deep.equal({ is_disabled: true });
    expect(body.text).to.match(/^<b>Tock: &quot;price feed&quot; \(#9\) failed<\/b>/);
    expect(body.text).to.include('HTTP status: 503');
    expect(body.text).to.include('<a href="https://tock.example.com/api/v1/cron_logs?id=9">View logs</a>');
    expect(body.text.length).to.be.at.most(4096);
  });

  it('without TOCK_PUBLIC_URL no logs link is sent', async () => {
    const request = await notifyOnce('slack', (url) => ({ url }), { publicUrl: undefined });
    expect(request.body).to.not.include('view logs');
  });
});
