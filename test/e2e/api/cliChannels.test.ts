import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { ok } from '../../support/api.ts';
import { runCli } from '../../support/processes.ts';
import { embeddedTarget, type ApiTarget } from '../../support/targets.ts';
import { startReceiver } from '../../integration/notifier/harness.ts';
import { capture } from '../../support/capture.ts';
import { waitFor } from '../../support/waitFor.ts';

/** `tock channels ...` as its own process on the SQLite file of a running embedded system. */
describe('operator CLI: notification channels, against a running system (embedded mode)', function () {
  this.timeout(90_000);
  let target: ApiTarget;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let env: Record<string, string>;

  before(async () => {
    receiver = await startReceiver();
    target = await embeddedTarget();
    // No NOTIFIER_ADDR: the CLI opens DATA_DIR's event store itself, next to the running server.
    env = { DATA_DIR: target.dataDir, NOTIFIER_ADDR: '', LOG_LEVEL: 'warn', TOCK_ALLOW_NETWORKS: '127.0.0.0/8' };
  });
  after(async () => {
    await target.stop();
    await receiver.close();
  });

  it('adds a webhook (secret printed once), lists it masked, tests, disables and deletes it; the API sees each change', async () => {
    const added = await runCli(['channels', 'add', '--account', '1', '--type', 'webhook', '--name', 'ops', '--url', `${receiver.url}/cli-hook`, '--escalate-after', '45'], env);
    expect(added.code, added.stderr).to.equal(0);
    const id = capture(/channel (\d+) \(webhook, ops\) added/, added.stdout);
    expect(added.stdout).to.match(/signing secret: whsec_[A-Za-z0-9+/]{43}= \(shown only now\)/);
    const listed = await runCli(['channels', 'list', '--account', '1'], env);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.include(`${id}\twebhook\tops\thttp://${new URL(receiver.url).host}/****\tenabled\t\t45 min`);
    expect(listed.stdout).to.not.include('cli-hook');
    const tested = await runCli(['channels', 'test', id, '--account', '1'], env);
    expect(tested.code, tested.stderr).to.equal(0);
    expect(receiver.received.map((r) => r.url)).to.deep.equal(['/cli-hook']);
    expect((await runCli(['channels', 'edit', id, '--account', '1', '--disable'], env)).stdout).to.include(`channel ${id} (webhook, ops) disabled`);
    // The CLI writes to the store from its own process: the running server sees it at its
    // subscription's next poll (25 ms), not necessarily by the time the CLI has exited.
    const seen = await waitFor(async () => {
      const list = await ok<any[]>(target.api.call('channel_list'));
      return list[0]?.enabled === false && list;
    }, 'the disabled channel in channel_list', 5000);
    expect(seen).to.have.length(1);
    expect(seen[0]).to.include({ id: Number(id), enabled: false });
    expect((await runCli(['channels', 'delete', id, '--account', '1'], env)).code).to.equal(0);
    await waitFor(async () => (await ok<any[]>(target.api.call('channel_list'))).length === 0, 'an empty channel_list', 5000);
  });

  it('secret-rotate prints the new secret once; the test message then verifies with the new and the old secret', async () => {
    const added = await runCli(['channels', 'add', '--account', '1', '--type', 'webhook', '--url', `${receiver.url}/rotated`], env);
    const id = capture(/channel (\d+) \(webhook, .*\) added/, added.stdout);
    const first = capture(/signing secret: (\S+) \(shown only now\)/, added.stdout);
    const rotated = await runCli(['channels', 'secret-rotate', id, '--account', '1', '--overlap', '3600'], env);
    expect(rotated.code, rotated.stderr).to.equal(0);
    const second = capture(/signing secret: (whsec_[A-Za-z0-9+/]{43}=) \(shown only now\)/, rotated.stdout);
    expect(second).to.not.equal(first);
    expect(rotated.stdout).to.match(/the previous secret also signs until \d{4}-\d\d-\d\dT/);
    expect((await runCli(['channels', 'test', id, '--account', '1'], env)).code).to.equal(0);
    const request = receiver.received.filter((r) => r.url === '/rotated').at(-1)!;
    for (const secret of [first, second]) expect(() => new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).to.not.throw();
    expect((await runCli(['channels', 'edit', id, '--account', '1', '--escalate-after', 'later'], env)).stderr).to.match(/--escalate-after: a whole number of minutes is required, got "later"/);
    const bad = await runCli(['channels', 'secret-rotate', id, '--account', '1', '--overlap', 'soon'], env);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/--overlap: a whole number of seconds is required, got "soon"/);
    const tooLong = await runCli(['channels', 'secret-rotate', id, '--account', '1', '--overlap', '9999999'], env);
    expect(tooLong.code).to.equal(1);
    expect(tooLong.stderr).to.match(/overlap: must be a whole number of seconds from 0 to 604800/);
  });

  it('refuses a bad type and another account\'s channel with a clear message', async () => {
    const bad = await runCli(['channels', 'add', '--account', '1', '--type', 'pager', '--url', 'https://x.example'], env);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.match(/type: must be one of email, webhook, slack, discord, teams, telegram/);
    const own = await ok(target.api.call('channel_add', { type: 'email', email: 'ops@example.com' }));
    const foreign = await runCli(['channels', 'delete', String(own.id), '--account', '2'], env);
    expect(foreign.code).to.not.equal(0);
    expect(foreign.stderr).to.match(new RegExp(`channel ${own.id} not found`));
    expect((await runCli(['channels', 'list'], env)).stderr).to.match(/--account: an account id is required/);
  });
});
