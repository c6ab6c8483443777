import { expect } from 'chai';
import { ExecutionOutcome } from '../../shared/gen/tock/v1/events_pb.ts';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

describe('downtime: everything stopped while occurrences pass', function () {
  this.timeout(40_000);

  it('runs each job once late (the execution says how late and how many it stands for), then on schedule', async () => {
    const target = await startTarget();
    const env = { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' };
    const first = await startTestSystem({ env, misfireMs: 500 });
    try {
      const job: any = await ok(first.api.call('cron_add', { url: `${target.url}/tick`, expression: '* * * * * *' }));
      await waitFor(() => target.received.length >= 2, 'two runs before the stop', 8000);
      await first.stop();
      const stopped = Date.now();
      await new Promise((r) => setTimeout(r, 4000));
      const second = await startTestSystem({ dataDir: first.dataDir, env, misfireMs: 500 });
      const restarted = Date.now();
      try {
        await waitFor(() => target.received.some((r) => Number(r.headers['x-tock-scheduled-time']) * 1000 > restarted + 1000), 'a run on schedule after the restart', 8000);
        const scheduledOf = (r: (typeof target.received)[number]) => Number(r.headers['x-tock-scheduled-time']) * 1000;
        const scheduled = target.received.map(scheduledOf);
        // The occurrences due while everything was down arrive as one late call, which the logs
        // mark as standing for the missed ones; no missed second gets a call of its own. (How late
        // that call is depends on how fast the restart is: under half a second here at best.)
        const { entries } = await second.clients.logs.logs({ accountId: 1n, id: BigInt(job.id), limit: 100 });
        const catchUps = entries.map((e) => e.execution!).filter((e) => e.missed > 0);
        expect(catchUps, 'one call for the whole gap, not one per missed second').to.have.length(1);
        const late = catchUps[0]!;
        const lateAt = Number(late.time) * 1000;
        expect(late.outcome).to.equal(ExecutionOutcome.SUCCEEDED);
        expect(late.missed, 'occurrences it stands for').to.be.at.least(3);
        expect(Number(late.lateByMs), 'how late: beyond the misfire threshold').to.be.above(500);
        expect(lateAt).to.be.above(stopped).and.below(restarted);
        expect(scheduled.filter((t) => t > stopped && t <= lateAt), 'calls for the gap').to.deep.equal([lateAt]);
        // Then every second again, once each.
        const after = scheduled.filter((t) => t > restarted);
        expect(new Set(after).size).to.equal(after.length);
      } finally {
        await second.destroy();
      }
    } finally {
      await target.close();
    }
  });
});
