import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { apiClient, ok } from '../../support/api.ts';
import { TEST_TOKEN } from '../../support/embedded.ts';
import { freePort, runCli } from '../../support/processes.ts';
import { startTarget } from '../../support/target.ts';
import { waitFor } from '../../support/waitFor.ts';
import { embeddedTarget, type ApiTarget } from '../../support/targets.ts';

/**
 * The CLI's owner commands (`tock jobs|logs|groups`) as their own processes against a running
 * embedded Tock over its public API, checked through the API itself; and the command line
 * contract: --help and --version exit 0, usage errors 2, refusals 1 with the API's sentence.
 */
describe('CLI: owner commands over the public API (embedded mode)', function () {
  this.timeout(120_000);
  let target: ApiTarget;
  let site: Awaited<ReturnType<typeof startTarget>>;
  let env: Record<string, string>;
  const version = JSON.parse(readFileSync('package.json', 'utf8')).version;

  before(async () => {
    target = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8' });
    site = await startTarget(() => ({ body: 'pong' }));
    env = { TOCK_URL: target.baseUrl, TOCK_TOKEN: TEST_TOKEN, JOBS_ADDR: '', DATA_DIR: target.dataDir, LOG_LEVEL: 'warn' };
  });
  after(async () => {
    await site?.close();
    await target?.stop();
  });

  const tock = (...args: string[]) => runCli(args, env);
  const tockJson = async (...args: string[]) => {
    const r = await tock(...args, '--json');
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0);
    return JSON.parse(r.stdout);
  };

  it('--help (everywhere) and --version exit 0 on stdout; no command or an unknown one exits 2', async () => {
    const helps = [['--help'], ['-h'], ['help'], ['help', 'jobs'], ['jobs', '--help'], ['jobs', 'add', '--help'], ['jobs', 'list', '-h'], ['logs', '--help'], ['groups', '--help'], ['groups', 'delete', '--help'], ['accounts', '--help'], ['accounts', 'create', '--help'], ['migrate', '--help'], ['next', '--help']];
    const results = await Promise.all(helps.map((args) => tock(...args)));
    for (const [i, r] of results.entries()) {
      expect(r.code, helps[i]!.join(' ')).to.equal(0);
      expect(r.stdout, helps[i]!.join(' ')).to.contain('usage:');
    }
    const v = await tock('--version');
    expect([v.code, v.stdout.trim()]).to.deep.equal([0, `tock ${version}`]);
    for (const args of [[], ['frobnicate']]) {
      const r = await tock(...args);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stderr).to.contain('usage: tock <command>');
    }
  });

  it('jobs add, get, list, edit, pause, enable: what the CLI prints is what the API holds', async () => {
    // Once a year: a run between the CLI's read and the API's would make the two records differ.
    const added = await tockJson('jobs', 'add', `url=${site.url}/cli`, 'expression=0 0 1 1 *', 'name=from the cli', 'timeout=7');
    expect(added).to.include({ name: 'from the cli', expression: '0 0 1 1 *', url: `${site.url}/cli`, timeout: 7 });
    const viaApi = await ok(target.api.call('cron_get', { id: added.id }));
    expect(await tockJson('jobs', 'get', String(added.id))).to.deep.equal(viaApi);
    expect((await tockJson('jobs', 'list')).map((j: { id: number }) => j.id)).to.include(added.id);

    const table = await tock('jobs', 'list');
    expect(table.stdout.split('\n')[0]).to.equal('id\tname\texpression\ttimezone\tstatus\tnext run\turl');
    expect(table.stdout).to.match(new RegExp(`^${added.id}\\tfrom the cli\\t0 0 1 1 \\*\\tUTC\\tactive\\t\\d{4}-\\d\\d-\\d\\dT[\\d:]+Z\\t${site.url}/cli$`, 'm'));

    const edited = await tock('jobs', 'edit', String(added.id), 'timeout=9', 'name=renamed', 'notifySkipped=true');
    expect(edited.code, edited.stderr).to.equal(0);
    expect(edited.stdout).to.contain(`job ${added.id} changed; status active`);
    expect(await ok(target.api.call('cron_get', { id: added.id }))).to.include({ timeout: 9, name: 'renamed', notifySkipped: true });

    const paused = await tock('jobs', 'pause', String(added.id), '--for', '2 hours');
    expect(paused.code, paused.stderr).to.equal(0);
    const job = await ok(target.api.call('cron_get', { id: added.id }));
    expect(job.status).to.equal(5);
    expect(job.pausedUntil - Math.floor(Date.now() / 1000)).to.be.within(7100, 7201);
    expect((await tock('jobs', 'enable', String(added.id))).code).to.equal(0);
    expect((await ok(target.api.call('cron_get', { id: added.id }))).status).to.equal(0);
    expect((await tock('jobs', 'disable', String(added.id))).code).to.equal(0);
    expect((await ok(target.api.call('cron_get', { id: added.id }))).status).to.equal(1);
  });

  it('jobs test calls the settings once and saves nothing; with an id, the job changed by them', async () => {
    const before = (await ok<any[]>(target.api.call('cron_list'))).length;
    const tested = await tock('jobs', 'test', `url=${site.url}/tested`, 'timeout=5');
    expect(tested.code, tested.stderr).to.equal(0);
    expect(tested.stdout).to.match(new RegExp(`^succeeded: HTTP 200 in \\d+\\.\\d{3} s from ${site.url}/tested \\(127\\.0\\.0\\.1\\)\npong\n$`));
    expect((await ok<any[]>(target.api.call('cron_list'))).length).to.equal(before);
    const job = await ok(target.api.call('cron_add', { url: `${site.url}/saved`, expression: 'manual' }));
    const changed = await tock('jobs', 'test', String(job.id), `url=${site.url}/changed`, '--json');
    expect(changed.code, changed.stderr).to.equal(0);
    expect(JSON.parse(changed.stdout)).to.include({ status: 0, httpStatus: 200, url: `${site.url}/changed` });
    expect(site.received.filter((r) => ['/tested', '/changed', '/saved'].includes(r.url)).map((r) => r.url)).to.deep.equal(['/tested', '/changed']);
    expect((await tock('jobs', 'test')).code).to.equal(2);
  });

  it('jobs snooze and unsnooze: the notifications silenced for a while or until recovery, then on again', async () => {
    const job = await ok(target.api.call('cron_add', { url: `${site.url}/snooze`, expression: 'manual' }));
    const [timed, untilRecovery] = await Promise.all([tock('jobs', 'snooze', String(job.id), '--for', '2 hours'), tockJson('jobs', 'snooze', String(job.id))]);
    expect(timed.code, timed.stderr).to.equal(0);
    expect(timed.stdout).to.match(new RegExp(`^job ${job.id}: notifications snoozed until \\d{4}-\\d\\d-\\d\\dT[\\d:]+Z`));
    expect(untilRecovery).to.include({ id: job.id, snoozed: true, untilRecovery: true });
    const off = await tock('jobs', 'unsnooze', String(job.id));
    expect(off.stdout.trim()).to.equal(`job ${job.id}: notifications on`);
    expect(await ok(target.api.call('cron_unsnooze', { id: job.id }))).to.include({ snoozed: false });
  });

  it('jobs run calls the URL; logs shows the result oldest first; --follow prints new ones as they come', async () => {
    const job = await ok(target.api.call('cron_add', { url: `${site.url}/run`, expression: 'manual' }));
    const ran = await tock('jobs', 'run', String(job.id));
    expect(ran.code, ran.stderr).to.equal(0);
    expect(ran.stdout).to.match(new RegExp(`^job ${job.id} runs at \\d{4}-\\d\\d-\\d\\dT[\\d:]+Z$`, 'm'));
    await waitFor(async () => (await ok(target.api.call('cron_logs', { id: job.id }))).length === 1, 'the run is logged', 15_000);
    expect(site.received.filter((r) => r.url === '/run')).to.have.length(1);

    const logs = await tock('logs', String(job.id));
    expect(logs.code, logs.stderr).to.equal(0);
    expect(logs.stdout).to.match(/^\d{4}-\d\d-\d\dT[\d:]+Z\tsucceeded\t200\t\d+\.\d{3}s$/m);
    const [line] = (await tock('logs', String(job.id), '--json')).stdout.trim().split('\n');
    expect(JSON.parse(line!)).to.include({ status: 0, httpStatus: 200, output: 'pong' });

    const follower = spawn(process.execPath, ['bin/tock.js', 'logs', String(job.id), '--follow', '--interval', '1'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errOut = '';
    follower.stdout.on('data', (c) => (out += c));
    follower.stderr.on('data', (c) => (errOut += c));
    const exited = new Promise<number | null>((resolve) => follower.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => out.includes('succeeded'), 'the follower prints the past result', 20_000);
      await ok(target.api.call('cron_run', { id: job.id }));
      await waitFor(() => out.trim().split('\n').length === 2, `the follower prints the new result (got: ${out}${errOut})`, 20_000);
      follower.kill('SIGINT');
      expect(await exited, errOut).to.equal(0);
      expect(out.trim().split('\n').every((l) => /\tsucceeded\t200\t/.test(l)), out).to.equal(true);
    } finally {
      follower.kill('SIGKILL');
    }
  });

  it('groups add, list, get, edit, delete through the API', async () => {
    const group = await tockJson('groups', 'add', '--name', 'nightly', '--priority', '3');
    expect(group).to.include({ name: 'nightly', priority: 3, jobCount: 0 });
    expect(await tockJson('groups', 'get', String(group.id))).to.deep.equal(await ok(target.api.call('group_get', { id: group.id })));
    expect(await tockJson('groups', 'list')).to.deep.include(group);
    const edited = await tock('groups', 'edit', String(group.id), '--priority', '5');
    expect(edited.code, edited.stderr).to.equal(0);
    expect((await ok(target.api.call('group_get', { id: group.id }))).priority).to.equal(5);
    const deleted = await tock('groups', 'delete', String(group.id));
    expect(deleted.code, deleted.stderr).to.equal(0);
    const gone = await target.api.call('group_get', { id: group.id });
    expect(gone.code).to.equal(5);
  });

  it('refusals exit 1 with the API sentence and change nothing; command line mistakes exit 2', async () => {
    const before = await ok(target.api.call('cron_list'));
    const missing = await target.api.call('cron_get', { id: 99999 });
    const badUrl = await target.api.call('cron_add', { url: 'ftp://example.com/x', expression: 'manual' });
    const [unknown, refused, badToken] = await Promise.all([
      tock('jobs', 'get', '99999'),
      tock('jobs', 'add', 'url=ftp://example.com/x', 'expression=manual'),
      runCli(['jobs', 'list'], { ...env, TOCK_TOKEN: 'NotAToken0123456789abcdefghijklm' }),
    ]);
    expect([unknown.code, unknown.stderr.trim()]).to.deep.equal([1, `error: ${missing.message}`]);
    expect([refused.code, refused.stderr.trim()]).to.deep.equal([1, `error: ${badUrl.message}`]);
    expect(badToken.code).to.equal(1);
    expect(badToken.stderr).to.match(/^error: .*token/im);

    const closed = await freePort();
    const [unreachable, noToken, badId, extra, noPairs, badOption, badLimit, badJobs] = await Promise.all([
      runCli(['jobs', 'list'], { ...env, TOCK_URL: `http://127.0.0.1:${closed}` }),
      runCli(['jobs', 'list'], { ...env, TOCK_TOKEN: '' }),
      tock('jobs', 'get', 'abc'),
      tock('jobs', 'delete', '3', '4'),
      tock('jobs', 'add', 'url'),
      tock('jobs', 'list', '--colour', 'blue'),
      tock('logs', '1', '--limit', '0'),
      tock('groups', 'delete', '1', '--jobs', 'maybe'),
    ]);
    expect(unreachable.code).to.equal(1);
    expect(unreachable.stderr).to.contain(`cannot reach Tock at http://127.0.0.1:${closed}`);
    expect(noToken.code).to.equal(2);
    expect(noToken.stderr).to.contain('TOCK_TOKEN');
    for (const [r, says] of [[badId, "got 'abc'"], [extra, "unexpected argument '4'"], [noPairs, 'name=value'], [badOption, '--colour'], [badLimit, '--limit'], [badJobs, '--jobs']] as const) {
      expect(r.code, says).to.equal(2);
      expect(r.stderr, says).to.contain(says);
      expect(r.stderr, says).to.contain('usage:');
    }
    expect(await ok(target.api.call('cron_list'))).to.deep.equal(before);
  });

  it('--url and --token flags work as the environment does (a second account sees only its own jobs)', async () => {
    const other = await target.newAccount({ name: 'flags' });
    await ok(other.call('cron_add', { url: `${site.url}/other`, expression: 'manual', name: 'theirs' }));
    const listed = await runCli(['jobs', 'list', '--json', '--url', `${target.baseUrl}/api/v1/`, '--token', other.token], { LOG_LEVEL: 'warn' });
    expect(listed.code, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout).map((j: { name: string }) => j.name)).to.deep.equal(['theirs']);
    const admin = apiClient(target.baseUrl, TEST_TOKEN);
    expect((await ok(admin.call('cron_list'))).map((j: { name: string }) => j.name)).not.to.include('theirs');
  });
});
