import { expect } from 'chai';
import { FakeClock } from '../../shared/clock.ts';
import { ok, rawRequest } from '../support/api.ts';
import { startTestSystem, TEST_TOKEN } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const HOUR = 3_600_000;

/**
 * An idempotent cron_batch_add replayed after its jobs ran: the answer is the first call's, to the
 * byte, though the fields computed at answer time (nextRun, lastResult, runs24h, ...) are now
 * different. Time is a fake clock: the jobs' next run is passed by moving it, not by waiting.
 */
describe('cron_batch_add replayed with its idempotency key, after the next run', function () {
  this.timeout(30_000);

  it('answers exactly what the first call answered', async () => {
    const target = await startTarget();
    // On the hour's half, so that the next run of an hourly job is half an hour away.
    const clock = new FakeClock(Math.floor(Date.now() / HOUR) * HOUR + HOUR / 2);
    const system = await startTestSystem({ clock, env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
    try {
      const body = JSON.stringify({ data: ['a', 'b'].map((name) => ({ url: `${target.url}/${name}`, name, expression: '0 * * * *' })) });
      const send = () =>
        rawRequest(system.baseUrl, '/api/v1/cron_batch_add', {
          headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', 'x-idempotency-key': 'replay-after-run' },
          body,
        });
      const first = await send();
      expect(first.http, first.text).to.equal(200);
      const [a] = first.json.data as { id: number; nextRun: number | null }[];
      // The planner holds the jobs (so a fresh answer would name their next run), and it is ahead.
      const planned = await waitFor(async () => (await ok<{ nextRun: number | null }>(system.api.call('cron_get', { id: a!.id }))).nextRun, 'the next run planned');
      expect(planned * 1000).to.be.above(clock.now());

      // Past the next run, until both jobs ran and the logs have them.
      await clock.advance(HOUR);
      await waitFor(async () => {
        await clock.advance(100);
        return target.received.length >= 2 && (await ok<unknown[]>(system.api.call('cron_logs', { id: a!.id }))).length > 0;
      }, 'both jobs ran and are logged');
      const fresh = await ok<{ nextRun: number; runs24h: number }>(system.api.call('cron_get', { id: a!.id }));
      expect(fresh.nextRun, 'a fresh answer has moved on').to.not.equal(first.json.data[0].nextRun);
      expect(fresh.runs24h).to.equal(1);

      const replay = await send();
      expect(replay.http).to.equal(200);
      expect(replay.json).to.deep.equal(first.json);
      expect(replay.text, 'byte for byte').to.equal(first.text);
      expect(target.received.map((r) => r.url).sort(), 'the replay created and ran nothing').to.deep.equal(['/a', '/b']);
    } finally {
      await system.destroy();
      await target.close();
    }
  });
});
