import { expect } from 'chai';
import { ok } from '../../support/api.ts';
import { TEST_TOKEN } from '../../support/embedded.ts';
import { runCli } from '../../support/processes.ts';
import { embeddedTarget, storeMark, type ApiTarget } from '../../support/targets.ts';

const INSTANT = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';

/**
 * `tock jobs history` and `tock jobs rollback` as their own processes against an embedded Tock,
 * checked through the API: the table of versions, the restore, and refusals that change nothing.
 */
describe('CLI: jobs history and jobs rollback over the public API (embedded mode)', function () {
  this.timeout(60_000);
  let target: ApiTarget;
  let env: Record<string, string>;
  let job: any;

  before(async () => {
    target = await embeddedTarget();
    env = { TOCK_URL: target.baseUrl, TOCK_TOKEN: TEST_TOKEN, LOG_LEVEL: 'warn' };
    job = await ok(target.api.call('cron_add', { url: 'https://example.com/cli', expression: '0 9 * * *', name: 'first', password: 'cli-pw-1' }));
    await ok(target.api.call('cron_edit', { id: job.id, name: 'second', timeout: 60 }));
    await ok(target.api.call('cron_pause', { id: job.id }));
    await ok(target.api.call('cron_edit', { id: job.id, password: 'cli-pw-2', expression: '30 18 * * *' }));
  });
  after(() => target?.stop());

  const tock = (...args: string[]) => runCli(args, env);

  it('jobs history: one row per version, newest first: number, time, what changed (secrets only as changed)', async () => {
    const r = await tock('jobs', 'history', String(job.id));
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).to.equal('version\ttime\twhat changed');
    expect(lines.slice(1).map((l) => l.replace(new RegExp(`\\t${INSTANT}\\t`), '\t(time)\t'))).to.deep.equal([
      '3\t(time)\texpression: "0 9 * * *" -> "30 18 * * *"; password: secret changed',
      '2\t(time)\tname: "first" -> "second"; timeout: 30 -> 60',
      '1\t(time)\tcreated',
    ]);
    expect(r.stdout).not.to.contain('cli-pw');
    const json = await tock('jobs', 'history', String(job.id), '--json');
    expect(JSON.parse(json.stdout)).to.deep.equal(await ok(target.api.call('cron_history', { id: job.id, versions: 1 })));
  });

  it('jobs rollback: the settings of the version, as a new version that says so; the state stays', async () => {
    const r = await tock('jobs', 'rollback', String(job.id), '1');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(`job ${job.id} has the settings of version 1; status paused`);
    expect(await ok(target.api.call('cron_get', { id: job.id }))).to.include({ name: 'first', timeout: 30, expression: '0 9 * * *', hasPassword: true, status: 5 });
    const history = await tock('jobs', 'history', String(job.id));
    expect(history.stdout.split('\n')[1]).to.match(
      new RegExp(`^4\\t${INSTANT}\\trollback to version 1: name: "second" -> "first"; expression: "30 18 \\* \\* \\*" -> "0 9 \\* \\* \\*"; password: secret changed; timeout: 60 -> 30$`),
    );
  });

  it("refusals exit 1 with the API's sentence and change nothing; command line mistakes exit 2", async () => {
    const mark = storeMark(target.dataDir);
    const api = await target.api.call('cron_rollback', { id: job.id, version: 9 });
    const [noVersion, unknownJob, noHistory] = await Promise.all([tock('jobs', 'rollback', String(job.id), '9'), tock('jobs', 'rollback', '99999', '1'), tock('jobs', 'history', '99999')]);
    expect([noVersion.code, noVersion.stderr.trim()]).to.deep.equal([1, `error: ${api.message}`]);
    expect(noVersion.stderr).to.contain('version: ');
    for (const r of [unknownJob, noHistory]) expect([r.code, r.stderr.trim()]).to.deep.equal([1, 'error: cron job 99999 not found']);

    const [missing, badVersion, zero, extra, badId] = await Promise.all([
      tock('jobs', 'rollback', String(job.id)),
      tock('jobs', 'rollback', String(job.id), 'latest'),
      tock('jobs', 'rollback', String(job.id), '0'),
      tock('jobs', 'rollback', String(job.id), '1', '2'),
      tock('jobs', 'history', 'abc'),
    ]);
    for (const [r, says] of [[missing, 'version to restore is required'], [badVersion, "got 'latest'"], [zero, "got '0'"], [extra, "unexpected argument '2'"], [badId, "got 'abc'"]] as const) {
      expect(r.code, says).to.equal(2);
      expect(r.stderr, says).to.contain(says);
      expect(r.stderr, says).to.contain('usage:');
    }
    expect(storeMark(target.dataDir)).to.deep.equal(mark);
  });
});
