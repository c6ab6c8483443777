import { expect } from 'chai';
import { ok } from '../support/api.ts';
import { waitFor } from '../support/waitFor.ts';
import { embeddedTarget } from '../support/targets.ts';
import { startTargetProcess } from '../support/targetProcess.ts';

// A crowd well beyond what its share lets it hold (calls in flight plus ten waiting per slot), so
// both seconds show the share at work. The 10,000-job crowd, and how late the other account's runs
// come, are measured by `npm run bench -- fairShare`.
const CROWD = 300;
const SHARE = 20;

/**
 * One account's jobs call a target that never answers (each call waits out its 5 s
 * timeout); another account has one job due on the same two seconds, on the same target. The
 * crowd must not make the other account's runs late. Without a share, the crowd's calls take
 * every connection the executor opens to that origin and the other run queues behind them for
 * 5 s; with it, the crowd keeps to its share of calls in flight, runs due together are admitted
 * round-robin between accounts at their instant, and runs beyond what the crowd may hold are
 * skipped (recorded).
 */
describe('fair share between accounts (embedded mode)', function () {
  this.timeout(120_000);

  it("runs another account's jobs while one account's calls hang, and holds the crowd to its share", async () => {
    const target = await startTargetProcess();
    await target.warmUp(SHARE, 3);
    const tock = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_ACCOUNT_CONCURRENCY: String(SHARE) });
    try {
      const crowd = await tock.newAccount({ name: 'crowd', jobLimit: CROWD });
      const other = await tock.newAccount({ name: 'other', jobLimit: 10 });
      // The jobs are made without a schedule, then given one for two whole seconds far enough
      // ahead for that one edit to land (how far depends on how fast this machine adds them).
      const started = Date.now();
      const group = await ok<any>(crowd.call('group_add', { name: 'crowd' }));
      for (let b = 0; b < Math.ceil(CROWD / 1000); b++) {
        const data = Array.from({ length: Math.min(1000, CROWD) }, (_, i) => ({ url: `${target.url}/hang/${b * 1000 + i}`, expression: 'manual', timezone: 'UTC', timeout: 5, group: group.id }));
        await ok(crowd.call('cron_batch_add', { data }));
      }
      const mine0 = await ok<any>(other.call('cron_add', { url: `${target.url}/other`, expression: 'manual', timezone: 'UTC' }));
      let at = Math.ceil(Date.now() / 1000) + Math.max(8, Math.ceil((Date.now() - started) / 1000));
      if (new Date(at * 1000).getUTCSeconds() === 59) at += 1;
      const d = new Date(at * 1000);
      const expression = `${d.getUTCSeconds()},${d.getUTCSeconds() + 1} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
      await ok(crowd.call('cron_group_edit', { id: group.id, expression }));
      await ok(other.call('cron_edit', { id: mine0.id, expression }));
      expect(Date.now(), 'the schedules were set before their first run').to.be.below(at * 1000 - 2000);

      let arrivals = await target.arrivals();
      await waitFor(async () => {
        arrivals = await target.arrivals();
        return Date.now() > (at + 2) * 1000 && arrivals.filter((a) => a.url === '/other').length >= 2;
      }, "the other account's two runs", (at + 20) * 1000 - Date.now());
      const mine = arrivals.filter((a) => a.url === '/other');
      const crowdCalls = (second: number) => arrivals.filter((a) => a.url.startsWith('/hang/') && Number(a.scheduled) === second).length;

      expect(mine.map((a) => Number(a.scheduled)).sort(), "both of the other account's runs arrived").to.deep.equal([at, at + 1]);
      expect(crowdCalls(at) + crowdCalls(at + 1), 'the crowd is held to its share of calls in flight').to.be.at.most(SHARE);
      // Its second second found the crowd over what it may hold: recorded as skipped, with why.
      const logs = await waitFor(async () => {
        const entries = await ok<any[]>(crowd.call('cron_logs', { id: 1 }));
        return entries.find((e) => e.result.time === at + 1);
      }, "the crowd's skipped run in cron_logs", 15_000);
      expect(logs.result.status).to.equal(2);
      expect(logs.result.error).to.match(/fair share/);
    } finally {
      await target.stop();
      await tock.stop();
    }
  });
});
