import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { ok } from '../../support/api.ts';
import { startTestSystem } from '../../support/embedded.ts';

/**
 * `H` is placed by the job's id alone: the planner shows the same runs after an edit and after a
 * restart that rebuilds everything from the event store, with nothing stored for the draw.
 */
describe('stable spread (H) through the API', function () {
  this.timeout(60_000);

  it('keeps the same runs across an edit and a restart, and spreads jobs apart', async () => {
    let system = await startTestSystem();
    const { dataDir } = system;
    try {
      const jobs = await ok<any[]>(system.api.call('cron_batch_add', {
        data: Array.from({ length: 20 }, (_, i) => ({ url: `https://example.com/${i}`, expression: 'H H(8-17) * * *' })),
      }));
      const next = async (id: number) => ok<number[]>(system.api.call('cron_next', { id, limit: 3 }));
      const before = await Promise.all(jobs.map((j) => next(j.id)));
      for (const runs of before) {
        for (const t of runs) expect(new Date(t * 1000).getUTCHours()).to.be.within(8, 17);
        expect(runs[1]! - runs[0]!).to.equal(86_400);
      }
      expect(new Set(before.map((runs) => runs[0]! % 86_400)).size, 'jobs spread over the day').to.be.greaterThan(10);

      await ok(system.api.call('cron_edit', { id: jobs[0].id, url: 'https://example.com/edited', name: 'edited' }));
      expect(await next(jobs[0].id)).to.deep.equal(before[0]);

      await system.stop();
      system = await startTestSystem({ dataDir });
      expect(await Promise.all(jobs.map((j) => next(j.id)))).to.deep.equal(before);
    } finally {
      await system.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('names the field when an H is malformed', async () => {
    const system = await startTestSystem();
    try {
      const answer = await system.api.call('cron_add', { url: 'https://example.com/', expression: 'H(40-20) * * * *' });
      expect(answer.status).to.equal('error');
      expect(answer.message).to.match(/expression.*minute field 'H\(40-20\)'.*backwards/);
      expect(await ok<any[]>(system.api.call('cron_list', {}))).to.have.length(0);
    } finally {
      await system.destroy();
    }
  });
});
