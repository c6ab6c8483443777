import { expect } from 'chai';
import { ok, rawRequest } from '../../support/api.ts';
import { TEST_TOKEN } from '../../support/embedded.ts';
import { runCli } from '../../support/processes.ts';
import { embeddedTarget, type ApiTarget } from '../../support/targets.ts';
import { YEARLY } from '../../support/jobFixtures.ts';

/** `tock jobs badge` and `tock calendar` as their own processes against an embedded Tock, checked through the API. */
describe('CLI: tock jobs badge and tock calendar (embedded mode)', function () {
  this.timeout(120_000);
  let target: ApiTarget;
  let env: Record<string, string>;
  before(async () => {
    target = await embeddedTarget();
    env = { TOCK_URL: target.baseUrl, TOCK_TOKEN: TEST_TOKEN, LOG_LEVEL: 'warn' };
  });
  after(() => target?.stop());
  const tock = (...args: string[]) => runCli(args, env);

  it('jobs badge prints the URL and the Markdown; --revoke ends it; bad lines exit 2, refusals 1', async () => {
    const job = await ok(target.api.call('cron_add', { url: 'https://example.com/cli-badge', expression: YEARLY, name: 'cli job' }));
    const shown = await tock('jobs', 'badge', String(job.id));
    expect(shown.code, shown.stderr).to.equal(0);
    const [url, markdown] = shown.stdout.trim().split('\n');
    const badge = await ok(target.api.call('cron_badge', { id: job.id }));
    expect(url).to.equal(badge.url);
    expect(url!.startsWith(`${target.baseUrl}/badge/`)).to.equal(true);
    expect(markdown).to.equal(`![cli job](${badge.url})`);
    expect((await rawRequest(target.baseUrl, badge.path, { method: 'GET' })).http).to.equal(200);
    const asJson = await tock('jobs', 'badge', String(job.id), '--json');
    expect(JSON.parse(asJson.stdout)).to.deep.equal(badge);

    const revoked = await tock('jobs', 'badge', String(job.id), '--revoke');
    expect([revoked.code, revoked.stdout.trim()]).to.deep.equal([0, `job ${job.id}: badge revoked; its URL answers 404 now`]);
    expect((await rawRequest(target.baseUrl, badge.path, { method: 'GET' })).http).to.equal(404);
    expect((await tock('jobs', 'badge', String(job.id), '--revoke')).stdout.trim()).to.equal(`job ${job.id} has no badge`);

    expect((await tock('jobs', 'badge')).code).to.equal(2);
    expect((await tock('jobs', 'badge', 'x')).code).to.equal(2);
    const missing = await tock('jobs', 'badge', '999999');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/not found/);
  });

  it('calendar prints each run of the hours ahead in the job\'s own time; --json is the API\'s answer', async () => {
    const job = await ok(target.api.call('cron_add', { url: 'https://example.com/cli-cal', expression: '17 * * * *', timezone: 'Asia/Kolkata', name: 'quarter past' }));
    const r = await tock('calendar', '--hours', '2');
    expect(r.code, r.stderr).to.equal(0);
    const [header, ...lines] = r.stdout.trim().split('\n');
    expect(header).to.equal('time\tid\tname');
    const own = lines.filter((l) => l.endsWith(`\t${job.id}\tquarter past`));
    expect(own).to.have.length(2);
    // Minute 17 of Kolkata's hours, shown with its offset (UTC+05:30).
    for (const line of own) expect(line).to.match(/^\d{4}-\d\d-\d\dT\d\d:17:00\+05:30\t/);
    const utc = (await ok(target.api.call('account_calendar', { hours: 2 }))).runs.filter((x: any) => x.id === job.id).map((x: any) => new Date(x.time * 1000).getUTCMinutes());
    expect(utc).to.deep.equal([47, 47]);
    const data = JSON.parse((await tock('calendar', '--hours', '2', '--json')).stdout);
    expect(data.runs.filter((x: any) => x.id === job.id)).to.have.length(2);
    expect(data).to.have.keys(['from', 'until', 'truncated', 'runs']);
    const bad = await tock('calendar', '--hours', '48');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/hours: must be from 1 to 24/);
    expect((await tock('calendar', 'extra')).code).to.equal(2);
    expect((await tock('calendar', '--help')).stdout).to.contain('usage:');
  });
});
