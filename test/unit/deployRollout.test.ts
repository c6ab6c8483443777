import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tally, upgradeOrder } from '../deploy/rollout.ts';

/** The pure parts of the deployment test's rollout and upgrade steps (test/deploy/rollout.ts). */
describe('deployment test: exactly once through a rollout, and UPGRADING.md\'s order (test/deploy)', () => {
  const DEPLOYMENTS = ['gateway', 'jobs', 'planner', 'logs', 'notifier', 'executor'];

  it('tally: each second of the window once at the target and once in cron_logs; outside the window ignored', () => {
    expect(tally([10, 11, 12, 9, 14], [10, 11, 12], 10, 12)).to.deep.equal({ first: 10, last: 12, lost: [], doubled: [], loggedLost: [], loggedDoubled: [] });
    expect(tally([10, 12, 12], [10, 10, 11, 12], 10, 12)).to.deep.include({ lost: [11], doubled: [12], loggedLost: [], loggedDoubled: [10] });
    expect(tally([], [], 10, 11)).to.deep.include({ lost: [10, 11], loggedLost: [10, 11] });
  });

  it("upgradeOrder reads the newest release's order: plurals to Deployments, 'all replicas at once' as one step", () => {
    const md = [
      '## From 0.2 to next',
      '### Order',
      '1. **executors**: first.',
      '2. **logs**.',
      '3. **notifier**, all replicas at once (scale to',
      '   0, set the image, scale back).',
      '### While both run',
      '## From 0.1 to 0.2',
      '### Order',
      '1. **gateway**',
    ].join('\n');
    expect(upgradeOrder(md, DEPLOYMENTS)).to.deep.equal([
      { workload: 'executor', together: false },
      { workload: 'logs', together: false },
      { workload: 'notifier', together: true },
    ]);
    expect(() => upgradeOrder(md.replace('**logs**', '**log-shipper**'), DEPLOYMENTS)).to.throw(/log-shipper/);
    expect(() => upgradeOrder('# Upgrading\n', DEPLOYMENTS)).to.throw(/Order/);
  });

  it('UPGRADING.md gives an order that rolls each Deployment once', () => {
    const order = upgradeOrder(readFileSync(join(import.meta.dirname, '../../UPGRADING.md'), 'utf8'), DEPLOYMENTS);
    expect(order.map((s) => s.workload).sort()).to.deep.equal([...DEPLOYMENTS].sort());
    expect(order.find((s) => s.workload === 'notifier')?.together).to.equal(true);
  });
});
