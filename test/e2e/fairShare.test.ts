import { expect } from 'chai';
import { ok } from '../support/api.ts';
import { fairShareScenario } from '../support/fairShareScenario.ts';
import { waitFor } from '../support/waitFor.ts';

// A crowd well beyond what its share lets it hold (calls in flight plus ten waiting per slot), so
// both seconds show the share at work. The 10,000-job crowd, and how late the other account's runs
// come, are measured by `npm run bench -- fairShare`.
const CROWD = 300;
const SHARE = 20;

/**
 * The scenario of test/support/fairShareScenario.ts: the crowd must not make the other account's
 * runs late. Without a share, the crowd's calls take
 * every connection the executor opens to that origin and the other run queues behind them for
 * 5 s; with it, the crowd keeps to its share of calls in flight, runs due together are admitted
 * round-robin between accounts at their instant, and runs beyond what the crowd may hold are
 * skipped (recorded).
 */
describe('fair share between accounts (embedded mode)', function () {
  this.timeout(120_000);

  it("runs another account's jobs while one account's calls hang, and holds the crowd to its share", async () => {
    const { at, arrivals, crowd, stop } = await fairShareScenario(CROWD, SHARE);
    try {
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
      await stop();
    }
  });
});
