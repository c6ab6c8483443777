import { create, toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { createInProcessBus } from '../../../shared/bus/inProcessBus.ts';
import { systemClock } from '../../../shared/clock.ts';
import { DueRunSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createMemoryLeases } from '../../../shared/leases/leases.ts';
import { createLogger } from '../../../shared/log.ts';
import { ensureTopology } from '../../../shared/topology.ts';
import { dueRunSubject } from '../../../shared/subjects/planner.ts';
import { startExecutorService } from '../../../services/executor/service.ts';
import { startTarget } from '../../support/target.ts';
import { waitFor } from '../../support/waitFor.ts';

describe('executor: stopping while runs wait for their instant', function () {
  this.timeout(20_000);

  it('hands held runs back at once, and the next executor fires each of them once, on time', async () => {
    const target = await startTarget();
    const bus = createInProcessBus();
    await ensureTopology(bus);
    const options = { bus, leases: createMemoryLeases(), clock: systemClock, log: createLogger('test', {}, 'silent'), allowNetworks: ['127.0.0.0/8'] };
    try {
      const first = await startExecutorService(options);
      const due = Date.now() + 4000;
      const run = create(DueRunSchema, { runId: `1:${due}`, scheduledAt: BigInt(due), plannedAt: BigInt(Date.now()), target: { jobId: 1n, accountId: 1n, url: `${target.url}/held`, httpMethod: 'GET', timeout: 5 } });
      await bus.publish(dueRunSubject(1), toBinary(DueRunSchema, run), { msgId: run.runId });
      await new Promise((r) => setTimeout(r, 100)); // delivered, and held until its instant

      await first.stop();
      expect(Date.now(), 'stopped without waiting for the instant').to.be.below(due - 1000);
      expect(target.received, 'nothing sent early').to.have.length(0);

      const second = await startExecutorService(options);
      await waitFor(() => target.received.length > 0, 'the run, fired by the next executor', 10_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(target.received).to.have.length(1);
      expect(target.received[0]!.at).to.be.at.least(due);
      expect(target.received[0]!.headers['x-tock-run-id']).to.equal(run.runId);
      await second.stop();
    } finally {
      await bus.close();
      await target.close();
    }
  });
});
