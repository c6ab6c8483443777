import { expect } from 'chai';
import { EMBEDDED_TOPOLOGY } from '../../shared/topology.ts';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/** Embedded mode runs its executor on a worker thread; these check what that must not change. */
describe('embedded executor thread', function () {
  this.timeout(30_000);

  it('runs the jobs off the main thread and, when the thread dies, a new one takes over without losing a run', async () => {
    const target = await startTarget();
    const system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_EXECUTOR_THREAD: 'on' } });
    try {
      // The thread ensures the topology too: it must not widen embedded mode's limits to the defaults.
      for (const name of ['RUNS', 'EXECUTIONS']) expect(system.bus.streamConfig(name)?.duplicateWindowMs, name).to.equal(EMBEDDED_TOPOLOGY.duplicateWindowMs);
      expect(system.bus.streamConfig('EXECUTIONS')?.maxMessages).to.equal(EMBEDDED_TOPOLOGY.executionsKept);
      const threadBefore = system.executor.threadId;
      expect(threadBefore, 'a worker thread').to.be.a('number').above(0);
      const job = await ok<any>(system.api.call('cron_add', { url: `${target.url}/tick`, expression: '* * * * * *' }));
      const scheduled = () => target.received.map((r) => Number(r.headers['x-tock-scheduled-time']));
      await waitFor(() => target.received.length >= 2, 'two runs before the thread dies', 5000);
      const killedAt = Math.floor(Date.now() / 1000);
      await system.executor.kill!();
      // The replacement starts after a second; runs held by the dead thread come back after ack wait (5 s).
      await waitFor(() => scheduled().some((s) => s >= killedAt + 8), 'runs well after the thread died', 20_000);
      expect(system.executor.threadId, 'a new thread').to.be.above(threadBefore!);
      const seen = scheduled();
      const first = Math.min(...seen);
      const last = killedAt + 8;
      for (let s = first; s <= last; s++) expect(seen, `the run of ${s}`).to.include(s);
      // Recorded by the main thread's logs service from what the thread published: each run once.
      const inWindow = async () => {
        const logged = await ok<any[]>(system.api.call('cron_logs', { id: job.id, limit: 100 }));
        return logged.map((l) => l.result.time).filter((t: number) => t >= first && t <= last);
      };
      await waitFor(async () => (await inWindow()).length >= last - first + 1, 'the runs in cron_logs', 5000);
      expect(new Set(await inWindow()).size).to.equal(last - first + 1);
      await ok(system.api.call('cron_delete', { id: job.id }));
    } finally {
      await system.destroy();
      await target.close();
    }
  });

  it('stays on the main thread when configured off', async () => {
    const system = await startTestSystem({ env: { TOCK_EXECUTOR_THREAD: 'off' } });
    try {
      expect(system.executor.threadId).to.equal(undefined);
    } finally {
      await system.destroy();
    }
  });
});
