import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiClient, fails, ok } from '../../support/api.ts';
import { runCli } from '../../support/processes.ts';
import { embeddedTarget, type ApiTarget } from '../../support/targets.ts';
import { capture } from '../../support/capture.ts';

/**
 * The operator CLI (`npx tock account ...`) as its own process on the SQLite file of a running
 * embedded system: what it does must hold for the server on the very next request.
 */
describe('operator CLI: accounts, against a running system (embedded mode)', function () {
  this.timeout(90_000);
  let target: ApiTarget;
  let env: Record<string, string>;
  let id: string;
  let token: string;

  before(async () => {
    target = await embeddedTarget();
    // No ADMIN_ADDR: the CLI opens DATA_DIR's event store itself, next to the running server.
    // (Through ADMIN_ADDR, against a jobs process: test/e2e/grpcAuth.test.ts.)
    env = { DATA_DIR: target.dataDir, ADMIN_ADDR: '', LOG_LEVEL: 'warn' };
  });
  after(() => target.stop());

  const cli = async (...args: string[]) => {
    const result = await runCli(args, env);
    return result;
  };

  it('creates an account and prints its token once; the server accepts it at once', async () => {
    const created = await cli('account', 'create', '--name', 'cli made', '--timezone', 'Europe/Oslo', '--limit', '10');
    expect(created.code, created.stderr).to.equal(0);
    id = capture(/account (\d+) \(cli made\) created/, created.stdout);
    token = capture(/token: ([A-Za-z0-9]{32})/, created.stdout);
    expect(created.stdout).to.match(/^signing secret: whsec_[A-Za-z0-9_-]{43}$/m);
    expect(await ok(apiClient(target.baseUrl, token).call('account_get'))).to.deep.equal({
      id: Number(id),
      name: 'cli made',
      timezone: 'Europe/Oslo',
      plan: 'self-hosted',
      cron: 10,
      expiryDate: null,
    });
  });

  it('stores only a hash of the token', async () => {
    for (const file of ['events.db', 'events.db-wal']) {
      const path = join(target.dataDir, file);
      if (existsSync(path)) expect(readFileSync(path).includes(token), file).to.equal(false);
    }
  });

  it('lists accounts as JSON with --json (`accounts`, the plural, is the same command)', async () => {
    const listed = await cli('accounts', 'list', '--json');
    expect(listed.code, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout)).to.deep.include({ id: Number(id), name: 'cli made', timezone: 'Europe/Oslo', jobLimit: 10, disabled: false });
    expect(listed.stdout).not.to.contain(token);
  });

  it('lists accounts, without tokens', async () => {
    const listed = await cli('account', 'list');
    expect(listed.code, listed.stderr).to.equal(0);
    const rows = listed.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(rows[0]).to.deep.equal(['id', 'name', 'timezone', 'job limit', 'status']);
    expect(rows).to.deep.include([id, 'cli made', 'Europe/Oslo', '10', 'active']);
    expect(rows).to.deep.include(['1', 'admin', 'UTC', 'none', 'active']);
    expect(listed.stdout).not.to.contain(token);
  });

  it('rotates a token: the old one fails on the very next request, the new one works', async () => {
    const api = apiClient(target.baseUrl, token);
    const job = await ok(api.call('cron_add', { url: 'https://example.com/cli', expression: 'manual' }));
    const rotated = await cli('account', 'rotate', id);
    expect(rotated.code, rotated.stderr).to.equal(0);
    const fresh = capture(/new token: ([A-Za-z0-9]{32})/, rotated.stdout);
    expect(fresh).not.to.equal(token);
    await fails(api.call('cron_get', { id: job.id }), 11, 401);
    const renewed = apiClient(target.baseUrl, fresh);
    expect((await ok(renewed.call('cron_get', { id: job.id }))).id).to.equal(job.id);
    token = fresh;
  });

  it('secret-rotate prints a new signing secret once, and when the previous one stops signing', async () => {
    const rotated = await cli('account', 'secret-rotate', id);
    expect(rotated.code, rotated.stderr).to.equal(0);
    expect(rotated.stdout).to.match(new RegExp(`^account ${id}: new signing secret: whsec_[A-Za-z0-9_-]{43}\n`));
    // The account was created with a secret (printed by create), which now has 24 hours left.
    const until = capture(/the previous one also signs until (\S+)/, rotated.stdout);
    expect(Date.parse(until) - Date.now()).to.be.within(24 * 3600_000 - 120_000, 24 * 3600_000);
    const listed = await cli('account', 'list');
    expect(listed.stdout).not.to.contain('whsec_');
  });

  it('disables an account: its token fails on the very next request, other accounts go on', async () => {
    const disabled = await cli('account', 'disable', id);
    expect(disabled.code, disabled.stderr).to.equal(0);
    expect(disabled.stdout).to.contain(`account ${id} disabled`);
    await fails(apiClient(target.baseUrl, token).call('account_get'), 11, 401);
    await ok(target.api.call('account_get'));
    const listed = await cli('account', 'list');
    expect(listed.stdout).to.match(new RegExp(`^${id}\\tcli made\\t.*\\tdisabled$`, 'm'));
  });

  it('refuses bad input with a message and a non-zero exit, creating nothing', async () => {
    const before = (await cli('account', 'list')).stdout;
    const [unknown, noId, badZone, badToken, badLimit, usage, badOption] = await Promise.all([
      cli('account', 'rotate', '99999'),
      cli('account', 'disable'),
      cli('account', 'create', '--name', 'x', '--timezone', 'Mars/Base'),
      cli('account', 'create', '--token', 'short'),
      cli('account', 'create', '--limit=-3'),
      cli('account', 'frobnicate'),
      cli('account', 'create', '--colour', 'blue'),
    ]);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('account 99999 not found');
    // A missing id or a bad --limit is a mistake in the command line (2); the jobs service's refusals are 1.
    expect(noId.code).to.equal(2);
    expect(noId.stderr).to.contain('account id is required');
    expect(badZone.code).to.equal(1);
    expect(badZone.stderr).to.contain('timezone');
    expect(badToken.code).to.equal(1);
    expect(badToken.stderr).to.contain('token');
    expect(badLimit.code).to.equal(2);
    expect(badLimit.stderr).to.contain('--limit');
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.contain('usage:');
    expect(badOption.code).to.equal(2);
    expect(badOption.stderr).to.match(/--colour[\s\S]*usage:/);
    expect((await cli('account', 'list')).stdout).to.equal(before);
  });
});
