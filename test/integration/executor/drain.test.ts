import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInProcessBus } from '../../../shared/bus/inProcessBus.ts';
import { systemClock } from '../../../shared/clock.ts';
import { DueRunSchema, ExecutionSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createMemoryLeases } from '../../../shared/leases/leases.ts';
import { createLogger } from '../../../shared/log.ts';
import { CONSUMERS, ensureTopology } from '../../../shared/topology.ts';
import { dueRunSubject } from '../../../shared/subjects/planner.ts';
import { startExecutorService } from '../../../services/executor/service.ts';
import { startTarget } from '../../support/target.ts';
import { waitFor } from '../../support/waitFor.ts';

/**
 * An executor's stop with a drain limit (TOCK_EXECUTOR_DRAIN_SECONDS), two replicas on one bus:
 * the calls in flight finish and are recorded by the replica that made them, however long past the
 * ack wait; past the limit a call is handed back and the other replica makes it and records it.
 */
describe('executor: stopping with calls in flight (drain limit)', function () {
  this.timeout(30_000);
  let bus: ReturnType<typeof createInProcessBus>;
  let executions: { runId: string; server: string; httpStatus: number }[];
  const leases = createMemoryLeases();
  const replica = (serverName: string, drainMs: number) =>
    startExecutorService({ bus, leases, clock: systemClock, log: createLogger('test', {}, 'silent'), allowNetworks: ['127.0.0.0/8'], serverName, drainMs });
  const publishRun = async (jobId: number, url: string) => {
    const due = Date.now();
    const run = create(DueRunSchema, { runId: `${jobId}:${due}`, scheduledAt: BigInt(due), plannedAt: BigInt(due), target: { jobId: BigInt(jobId), accountId: 1n, url, httpMethod: 'GET', timeout: 60, instances: 1 } });
    await bus.publish(dueRunSubject(jobId), toBinary(DueRunSchema, run), { msgId: run.runId });
    return run.runId;
  };

  beforeEach(async () => {
    bus = createInProcessBus();
    await ensureTopology(bus);
    executions = [];
    await bus.subscribe('tock.executions.>', (_subject, data) => {
      const e = fromBinary(ExecutionSchema, data);
      executions.push({ runId: e.runId, server: e.server, httpStatus: e.httpStatus });
    });
  });
  afterEach(() => bus.close());

  it('lets a call longer than the ack wait finish within the limit: recorded once, by its executor, never taken over', async () => {
    const callMs = CONSUMERS.executors.ackWaitMs + 2000;
    const target = await startTarget(() => ({ delayMs: callMs }));
    try {
      const first = await replica('first', 20_000);
      const runId = await publishRun(1, `${target.url}/slow`);
      await waitFor(() => target.received.length === 1, 'the call to be sent', 5_000);
      const second = await replica('second', 20_000);
      await first.stop();
      expect(executions, 'recorded before the stop ended').to.deep.equal([{ runId, server: 'first', httpStatus: 200 }]);
      await new Promise((r) => setTimeout(r, 500));
      await second.stop();
      expect(target.received.map((r) => r.headers['x-tock-run-id']), 'called once').to.deep.equal([runId]);
      expect(executions).to.have.length(1);
    } finally {
      await target.close();
    }
  });

  it('past the limit hands the call back: the other executor makes it again (the one duplicate the rule allows) and alone records it', async () => {
    // The first call gets no answer until the test ends; later ones are answered at once.
    const held: ServerResponse[] = [];
    const received: string[] = [];
    const hanging = createServer((req, res) => {
      received.push(String(req.headers['x-tock-run-id']));
      if (received.length === 1) held.push(res);
      else res.end('ok');
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hangs`;
    try {
      const first = await replica('first', 1000);
      const runId = await publishRun(2, url);
      await waitFor(() => received.length === 1, 'the call to be sent', 5_000);
      const second = await replica('second', 1000);
      await first.stop();
      // Taken over at once (not after the ack wait), its lease (instances = 1) included.
      await waitFor(() => executions.length > 0, 'the run recorded by the other executor', 5_000);
      await new Promise((r) => setTimeout(r, 500));
      await second.stop();
      expect(received).to.deep.equal([runId, runId]);
      expect(executions, 'one record, the second executor\'s: nothing from the call cut short').to.deep.equal([{ runId, server: 'second', httpStatus: 200 }]);
    } finally {
      for (const res of held) res.destroy();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });
});
