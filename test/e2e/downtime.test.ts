import { expect } from 'chai';
import { FakeClock } from '../../shared/clock.ts';
import { ExecutionOutcome } from '../../shared/gen/tock/v1/events_pb.ts';
import { ok } from '../support/api.ts';
import { drive } from '../support/drive.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';

/** The planner's catch-up threshold here: occurrences missed by more collapse into one late run. */
const MISFIRE_MS = 500;
/** Down long enough for four occurrences of an every-second job to pass the threshold. */
const OUTAGE_MS = MISFIRE_MS + 4 * 1000;

// On a fake clock: the collapse is the planner's logic at its restart, which a real restart of
// every service (same data dir, a new process's worth of state) covers without waiting it out.
describe('downtime: everything stopped while occurrences pass', function () {
  it('runs each job once late (the execution says how late and how many it stands for), then on schedule', async () => {
    // Off the whole second, so no occurrence falls on the instant of the stop or the restart.
    const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000 + 250);
    const target = await startTarget();
    const env = { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' };
    const first = await startTestSystem({ env, misfireMs: MISFIRE_MS, clock });
    try {
      const job: any = await ok(first.api.call('cron_add', { url: `${target.url}/tick`, expression: '* * * * * *' }));
      await drive(clock, () => target.received.length >= 2, 'two runs before the stop');
      await first.stop();
      const stopped = clock.now();
      await clock.advance(OUTAGE_MS);
      const restarted = clock.now();
      const second = await startTestSystem({ dataDir: first.dataDir, env, misfireMs: MISFIRE_MS, clock });
      try {
        const scheduledOf = (r: (typeof target.received)[number]) => Number(r.headers['x-tock-scheduled-time']) * 1000;
        await drive(clock, () => target.received.some((r) => scheduledOf(r) > restarted + 2000), 'runs on schedule after the restart');
        const scheduled = target.received.map(scheduledOf);
        // The occurrences due while everything was down arrive as one late call, which the logs
        // mark as standing for the missed ones; no missed second gets a call of its own.
        const { entries } = await second.clients.logs.logs({ accountId: 1n, id: BigInt(job.id), limit: 100 });
        const catchUps = entries.map((e) => e.execution!).filter((e) => e.missed > 0);
        expect(catchUps, 'one call for the whole gap, not one per missed second').to.have.length(1);
        const late = catchUps[0]!;
        const lateAt = Number(late.time) * 1000;
        expect(late.outcome).to.equal(ExecutionOutcome.SUCCEEDED);
        expect(late.missed, 'occurrences it stands for').to.be.at.least((OUTAGE_MS - MISFIRE_MS) / 1000);
        expect(Number(late.lateByMs), 'how late: beyond the misfire threshold').to.be.above(MISFIRE_MS);
        expect(lateAt).to.be.above(stopped).and.below(restarted);
        expect(scheduled.filter((t) => t > stopped && t <= lateAt), 'calls for the gap').to.deep.equal([lateAt]);
        // Then every second again, once each, none left out.
        const after = scheduled.filter((t) => t > restarted);
        const firstAfter = Math.ceil(restarted / 1000) * 1000;
        expect(after).to.deep.equal(after.map((_, i) => firstAfter + i * 1000));
      } finally {
        await second.destroy();
      }
    } finally {
      await target.close();
    }
  });
});
