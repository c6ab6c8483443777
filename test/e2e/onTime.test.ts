import { expect } from 'chai';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { waitFor } from '../support/waitFor.ts';
import { startTargetProcess, type Arrival } from '../support/targetProcess.ts';

// Enough jobs that their runs of one second leave the executor together; how late they come is
// measured by `npm run bench -- onTime` (1000 jobs for 20 s), not here.
const JOBS = 100;
const SECONDS = 3;

describe(`every occurrence once: ${JOBS} jobs every second for ${SECONDS} s (embedded mode)`, function () {
  this.timeout(60_000);

  it('delivers every occurrence to the target, once', async () => {
    const target = await startTargetProcess();
    const system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_EXECUTOR_THREAD: 'on' } });
    try {
      const data = Array.from({ length: JOBS }, (_, i) => ({ url: `${target.url}/job/${i}`, expression: '* * * * * *', name: `tick ${i}` }));
      const jobs = await ok<any[]>(system.api.call('cron_batch_add', { data }));
      expect(jobs).to.have.length(JOBS);
      // Whole seconds that start after every job exists, so each job owes one run per second.
      const first = Math.ceil(Date.now() / 1000);
      const last = first + SECONDS - 1;
      let received: Arrival[] = [];
      await waitFor(async () => {
        received = await target.arrivals();
        return received.filter((r) => Number(r.scheduled) === last).length >= JOBS;
      }, 'the last second', (SECONDS + 15) * 1000);
      await ok(system.api.call('cron_batch_delete', { id: jobs.map((j) => j.id) }));

      const perOccurrence = new Map<string, number>();
      for (const r of received.filter((r) => Number(r.scheduled) >= first && Number(r.scheduled) <= last)) {
        perOccurrence.set(`${r.url}@${r.scheduled}`, (perOccurrence.get(`${r.url}@${r.scheduled}`) ?? 0) + 1);
      }
      expect(perOccurrence.size, 'every occurrence arrived').to.equal(JOBS * SECONDS);
      expect([...perOccurrence.entries()].filter(([, n]) => n > 1), 'no occurrence arrived twice').to.deep.equal([]);
    } finally {
      await system.destroy();
      await target.stop();
    }
  });
});
