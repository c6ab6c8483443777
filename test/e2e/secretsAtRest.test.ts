import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteEventStore } from '../../shared/eventStore/sqliteEventStore.ts';
import { defaultSettings } from '../../shared/job/index.ts';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';
import { distributedEnv, startService } from '../support/processes.ts';
import { streamEvents } from '../support/targets.ts';

const URL_PASSWORD = 'UrlPass-9c2e51';
const PASSWORD = 'FieldPw-51a7d3';
const HEADER_VALUE = 'HdrVal-3f81b0';
const SECRETS = [URL_PASSWORD, PASSWORD, HEADER_VALUE];
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

/** Every secret found in the bytes of these files (a database and its WAL, as they are on disk). */
function secretsIn(dir: string, files: string[], secrets = SECRETS): string[] {
  const found: string[] = [];
  for (const file of files) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path).toString('latin1');
    for (const secret of secrets) if (bytes.includes(secret)) found.push(`${secret} in ${file}`);
  }
  return found;
}
const DB_FILES = ['events.db', 'events.db-wal', 'logs.db', 'logs.db-wal'];
const mode = (path: string) => statSync(path).mode & 0o777;

describe('job secrets at rest (embedded mode, real HTTP target, executor thread)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const dueRuns: Buffer[] = [];
  const hits = (path: string) => target.received.filter((r) => r.url === path);

  before(async () => {
    target = await startTarget();
    // The executor thread as deployed: the keys that open the secrets cross into it.
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_EXECUTOR_THREAD: 'on' } });
    await system.bus.subscribe('tock.runs.due.>', (_subject, data) => dueRuns.push(Buffer.from(data)));
  });
  after(async () => {
    await system.destroy();
    await target.close();
  });

  it('calls with the credentials, yet no file, due run or answer holds a password, URL credential or header value', async () => {
    const withUrl: any = await ok(system.api.call('cron_add', { url: target.url.replace('http://', `http://alice:${URL_PASSWORD}@`) + '/url', expression: '* * * * * *', httpHeaders: `X-Api-Key: ${HEADER_VALUE}` }));
    const withField: any = await ok(system.api.call('cron_add', { url: `${target.url}/field`, expression: '* * * * * *', username: 'bob', password: PASSWORD }));
    await waitFor(() => hits('/url').length >= 2 && hits('/field').length >= 2, 'two runs of each job', 10_000);
    await ok(system.api.call('cron_disable', { id: withUrl.id }));
    await ok(system.api.call('cron_disable', { id: withField.id }));
    expect(hits('/url')[0]!.headers.authorization).to.equal(basic('alice', URL_PASSWORD));
    expect(hits('/url')[0]!.headers['x-api-key']).to.equal(HEADER_VALUE);
    expect(hits('/field')[0]!.headers.authorization).to.equal(basic('bob', PASSWORD));

    const got: any = await ok(system.api.call('cron_get', { id: withUrl.id }));
    expect(got.url).to.equal(target.url.replace('http://', 'http://***@') + '/url');
    expect(got.httpHeaders).to.equal('X-Api-Key: ***');
    expect(await ok(system.api.call('cron_get', { id: withField.id }))).to.include({ hasPassword: true, username: 'bob' });
    const logs: any[] = await waitFor(async () => {
      const list = await ok<any[]>(system.api.call('cron_logs', { id: withUrl.id }));
      return list.length >= 2 && list;
    }, 'two runs in cron_logs');
    const answers = JSON.stringify([
      got,
      logs,
      await ok(system.api.call('cron_logs', { id: withField.id })),
      await ok(system.api.call('cron_list', {})),
      await ok(system.api.call('cron_history', { id: withUrl.id })),
      await ok(system.api.call('cron_history', { id: withField.id })),
    ]);
    for (const secret of SECRETS) expect(answers, 'API answers').to.not.include(secret);
    expect(answers).to.include('***@127.0.0.1');

    expect(dueRuns.length).to.be.greaterThan(3);
    const onTheBus = Buffer.concat(dueRuns).toString('latin1');
    for (const secret of SECRETS) expect(onTheBus, 'due runs on the bus').to.not.include(secret);
    expect(onTheBus).to.include('enc:v1:');

    expect(secretsIn(system.dataDir, DB_FILES), 'database files').to.deep.equal([]);
    const created = streamEvents(system.dataDir, `cronjob-${withField.id}`)[0]!;
    // An account's signing secret is sealed the same way.
    const { account, signingSecret } = await system.adminClient.createAccount({ name: 'signer', timezone: 'UTC', jobLimit: 0 });
    expect(signingSecret).to.have.length.greaterThan(10);
    const accountCreated = streamEvents(system.dataDir, `account-${account!.id}`)[0]!;
    expect(accountCreated.data.signingSecret).to.match(/^enc:v1:/);
    for (const file of DB_FILES.filter((f) => existsSync(join(system.dataDir, f)))) expect(readFileSync(join(system.dataDir, file)).toString('latin1'), file).to.not.include(signingSecret);
    expect(created.data.settings.password).to.match(/^enc:v1:/);
  });

  it('creates its data files for the owner only: key file, event store, logs database 0600; directories 0700', () => {
    for (const file of ['secret.key', 'events.db', 'logs.db']) expect(mode(join(system.dataDir, file)), file).to.equal(0o600);
    if (existsSync(join(system.dataDir, 'events.db-wal'))) expect(mode(join(system.dataDir, 'events.db-wal'))).to.equal(0o600);
  });
});

const HOOK_PATH = 'HookPath-6d0e42';
const SLACK_PATH = 'SlackPath-b8a19c';
const BOT_TOKEN = '4242:BotToken-Secret-2c7f55aa';

describe('channel secrets at rest (embedded mode, a failure notified to real local receivers)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let receiver: Awaited<ReturnType<typeof startTarget>>;
  const at = (prefix: string) => receiver.received.find((r) => r.url.startsWith(prefix));

  before(async () => {
    receiver = await startTarget((r) => ({ status: r.url === '/job' ? 500 : 200 }));
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_NOTIFY_WINDOW_MS: '0', TOCK_TELEGRAM_API: `${receiver.url}/telegram` } });
  });
  after(async () => {
    await system.destroy();
    await receiver.close();
  });

  it('delivers through webhook, Slack and Telegram channels, yet no file or answer holds their URL, token or signing secret', async () => {
    const hook: any = await ok(system.api.call('channel_add', { type: 'webhook', url: `${receiver.url}/hook/${HOOK_PATH}` }));
    const slack: any = await ok(system.api.call('channel_add', { type: 'slack', url: `${receiver.url}/slack/${SLACK_PATH}` }));
    const telegram: any = await ok(system.api.call('channel_add', { type: 'telegram', botToken: BOT_TOKEN, chatId: '-100200300' }));
    const job: any = await ok(system.api.call('cron_add', { url: `${receiver.url}/job`, expression: 'manual', name: 'fails' }));
    await ok(system.api.call('cron_run', { id: job.id }));
    await waitFor(() => at('/hook/') && at('/slack/') && at('/telegram/'), 'the notification on all three channels', 20_000);

    const delivered = at('/hook/')!;
    expect(delivered.url).to.equal(`/hook/${HOOK_PATH}`);
    const [t, v1] = String(delivered.headers['x-tock-signature']).split(',').map((p) => p.split('=')[1]);
    expect(v1, 'signed with the secret channel_add showed').to.equal(createHmac('sha256', hook.secret).update(`${t}.${delivered.body}`).digest('hex'));
    expect(at('/slack/')!.url).to.equal(`/slack/${SLACK_PATH}`);
    expect(at('/telegram/')!.url).to.equal(`/telegram/bot${BOT_TOKEN}/sendMessage`);

    const secrets = [HOOK_PATH, SLACK_PATH, BOT_TOKEN, BOT_TOKEN.split(':')[1]!, hook.secret as string];
    const listed: any[] = await ok(system.api.call('channel_list', {}));
    for (const secret of secrets) expect(JSON.stringify(listed), 'channel_list').to.not.include(secret);
    // Masked as before: the host of a URL, the last characters of a bot token.
    expect(listed.find((c) => c.id === slack.id).url).to.equal(`http://${new URL(receiver.url).host}/****`);
    expect(listed.find((c) => c.id === telegram.id).botToken).to.equal('****55aa');

    expect(secretsIn(system.dataDir, DB_FILES, secrets), 'database files').to.deep.equal([]);
    const added = streamEvents(system.dataDir, `channel-${hook.id}`)[0]!;
    expect(added.data.address.url).to.match(/^enc:v1:/);
    expect(added.data.secret).to.match(/^enc:v1:/);
    expect(streamEvents(system.dataDir, `channel-${telegram.id}`)[0]!.data.address).to.include({ chatId: '-100200300' });
  });
});

describe('job secrets written in clear before sealing existed', function () {
  this.timeout(60_000);
  let dataDir: string;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const env = { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tock-legacy-'));
    target = await startTarget();
  });
  after(async () => {
    await target.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('are read as they are (the job still calls with them), masked in answers, and sealed by the next edit', async () => {
    // A first start creates the account; then a job is written as older versions wrote it: in clear.
    const first = await startTestSystem({ dataDir, env });
    await first.stop();
    const store = openSqliteEventStore(join(dataDir, 'events.db'));
    const settings = { ...defaultSettings('UTC'), url: `${target.url}/legacy`, expression: '* * * * * *', username: 'carol', password: PASSWORD, httpHeaders: `X-Api-Key: ${HEADER_VALUE}` };
    await store.appendToStream('cronjob-9000', [{ type: 'JobCreated', data: { id: 9000, accountId: 1, settings, at: Date.now() }, metadata: { accountId: 1 } }]);
    await store.close();

    const system = await startTestSystem({ dataDir, env });
    try {
      await waitFor(() => target.received.length >= 1, 'a run of the clear-text job', 10_000);
      expect(target.received[0]!.headers.authorization).to.equal(basic('carol', PASSWORD));
      expect(target.received[0]!.headers['x-api-key']).to.equal(HEADER_VALUE);
      const got: any = await ok(system.api.call('cron_get', { id: 9000 }));
      expect(got).to.include({ hasPassword: true, httpHeaders: 'X-Api-Key: ***' });

      await ok(system.api.call('cron_edit', { id: 9000, password: 'Edited-7e4c', httpHeaders: 'X-Api-Key: Edited-hdr' }));
      const edited = streamEvents(dataDir, 'cronjob-9000').find((e) => e.type === 'JobEdited')!;
      expect(edited.data.changes.password).to.match(/^enc:v1:/);
      expect(edited.data.changes.httpHeaders).to.match(/^X-Api-Key: enc:v1:/);
      const at = Date.now();
      await waitFor(() => target.received.some((r) => r.at > at + 1500 && r.headers.authorization === basic('carol', 'Edited-7e4c')), 'a run with the edited password', 10_000);
    } finally {
      await system.stop();
    }
  });
});

describe('channel secrets written in clear before sealing existed', function () {
  this.timeout(60_000);

  it('are read as they are (the channel still delivers, signed with its secret), masked in answers, and sealed by the next edit', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tock-legacy-channel-'));
    const receiver = await startTarget();
    try {
      const first = await startTestSystem({ dataDir });
      await first.stop();
      const store = openSqliteEventStore(join(dataDir, 'events.db'));
      const clear = { id: 9100, accountId: 1, type: 'webhook', name: 'old hook', address: { url: `${receiver.url}/old/${HOOK_PATH}` }, secret: 'OldSigningSecret-1b9e', at: Date.now() };
      await store.appendToStream('channel-9100', [{ type: 'ChannelAdded', data: clear }]);
      await store.close();

      const system = await startTestSystem({ dataDir, env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
      try {
        expect(await ok(system.api.call('channel_test', { id: 9100 }))).to.deep.equal({ delivered: true, error: '' });
        const request = receiver.received.at(-1)!;
        expect(request.url).to.equal(`/old/${HOOK_PATH}`);
        const [t, v1] = String(request.headers['x-tock-signature']).split(',').map((p) => p.split('=')[1]);
        expect(v1).to.equal(createHmac('sha256', clear.secret).update(`${t}.${request.body}`).digest('hex'));
        expect(JSON.stringify(await ok(system.api.call('channel_list', {})))).to.not.include(HOOK_PATH);

        await ok(system.api.call('channel_edit', { id: 9100, url: `${receiver.url}/new/${SLACK_PATH}` }));
        const edited = streamEvents(dataDir, 'channel-9100').find((e) => e.type === 'ChannelEdited')!;
        expect(edited.data.address.url).to.match(/^enc:v1:/);
        expect(await ok(system.api.call('channel_test', { id: 9100 }))).to.deep.equal({ delivered: true, error: '' });
        expect(receiver.received.at(-1)!.url).to.equal(`/new/${SLACK_PATH}`);
      } finally {
        await system.stop();
      }
    } finally {
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a distributed service that needs the key of job secrets', function () {
  this.timeout(120_000);

  it('jobs, executor and notifier refuse to start without it, naming the setting', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tock-nokey-'));
    try {
      const env = { ...(await distributedEnv(dataDir, { NATS_URL: 'nats://127.0.0.1:9' })), TOCK_SECRET_KEY: '' };
      for (const name of ['jobs', 'executor', 'notifier']) {
        const error = await startService(name, env, /listening|consuming/, 60_000).then(
          (p) => p.kill().then(() => null),
          (e: Error) => e,
        );
        expect(error?.message, name).to.match(new RegExp(`config error: TOCK_SECRET_KEY: required by the ${name} service`));
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
