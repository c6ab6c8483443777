import { create, toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { DueRunSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { dueRunSubject } from '../../shared/subjects/planner.ts';
import { sampleSum, samples } from '../support/metricsText.ts';
import { freePort, startService, TEST_SECRET_KEY, type ServiceProcess } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';
import { natsForThisSuite } from '../support/natsServer.ts';


/** Distributed mode: a service's operations port, scraped over HTTP as Prometheus would. */
describe('ops port of a distributed service (executor on NATS)', function () {
  const nats = natsForThisSuite();
  this.timeout(60_000);
  after(() => nats.stop());

  it('serves /healthz, /readyz and /metrics with the runs it executed and its consumer backlog', async () => {
    const target = await startTarget();
    const bus = await connectNatsBus(nats.url);
    const opsPort = await freePort();
    let executor: ServiceProcess | undefined;
    try {
      await ensureTopology(bus);
      executor = await startService('executor', { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', OPS_PORT: String(opsPort), TOCK_SECRET_KEY: TEST_SECRET_KEY }, /ops server listening/);
      const ops = `http://127.0.0.1:${opsPort}`;
      expect((await fetch(`${ops}/healthz`)).status).to.equal(200);
      // Ready once its consumer runs (a moment after the port opens).
      await waitFor(async () => (await fetch(`${ops}/readyz`)).status === 200, 'ready', 15_000);
      expect((await fetch(`${ops}/nothing`)).status).to.equal(404);

      const jobId = 900_000 + Math.floor(Math.random() * 99_999);
      const due = Date.now() + 200;
      const run = create(DueRunSchema, { runId: `${jobId}:${due}`, scheduledAt: BigInt(due), plannedAt: BigInt(Date.now()), target: { jobId: BigInt(jobId), accountId: 1n, url: `${target.url}/ops`, httpMethod: 'GET', timeout: 5 } });
      await bus.publish(dueRunSubject(jobId), toBinary(DueRunSchema, run), { msgId: run.runId });

      const text = await waitFor(async () => {
        const t = await (await fetch(`${ops}/metrics`)).text();
        return sampleSum(t, 'tock_executions_total', { outcome: 'succeeded' }) >= 1 && t;
      }, 'the run counted on the ops port', 20_000);
      expect(target.received).to.have.length(1);
      expect(sampleSum(text, 'tock_run_lateness_seconds_count')).to.equal(1);
      expect(samples(text, 'tock_bus_consumer_pending_messages', { stream: 'RUNS', durable: 'executors' })).to.have.length(1);
      expect(sampleSum(text, 'process_resident_memory_bytes')).to.be.above(0);
    } finally {
      await executor?.kill();
      await bus.close();
      await target.close();
    }
  });
});
