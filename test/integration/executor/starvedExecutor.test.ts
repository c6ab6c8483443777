import { create, toBinary } from '@bufbuild/protobuf';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNatsBus } from '../../../shared/bus/natsBus.ts';
import type { Bus } from '../../../shared/bus/bus.ts';
import { DueRunSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { dueRunSubject } from '../../../shared/subjects/planner.ts';
import { CONSUMERS, ensureTopology } from '../../../shared/topology.ts';
import { privateNats } from '../../support/natsServer.ts';
import { distributedEnv, freePort, SERVICE_READY, startService, type ServiceProcess } from '../../support/processes.ts';
import { startTarget } from '../../support/target.ts';
import { sampleSum } from '../../support/metricsText.ts';
import { sleep, waitFor } from '../../support/waitFor.ts';

const RUNS = 20;

/**
 * An executor starved past the ack wait (SIGSTOP: what a saturated machine does to its event
 * loop, only longer) while it holds runs waiting for their instant: the bus hands them to the
 * other replica, which calls them. Once it runs again, the starved executor must not call them too.
 */
describe('executor starved past the ack wait while holding runs (two executor processes, real NATS)', function () {
  this.timeout(90_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-starved-'));
  let nats: Awaited<ReturnType<typeof privateNats>>;
  let nc: NatsConnection;
  let bus: Bus;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const executors: ServiceProcess[] = [];

  before(async function () {
    this.timeout(30_000);
    nats = await privateNats();
    nc = await connect({ servers: nats.url });
    bus = await connectNatsBus(nats.url, { name: 'starved-test' });
    await ensureTopology(bus);
    target = await startTarget();
  });
  after(async () => {
    for (const e of executors) {
      e.child.kill('SIGCONT');
      await e.kill('SIGKILL');
    }
    await bus?.close();
    await nc?.close();
    await target?.close();
    await nats?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('calls each run once: the replica the bus redelivered it to does, the starved one does not', async () => {
    const env = await distributedEnv(dataDir, { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', LOG_LEVEL: 'info' });
    // Each executor's User-Agent names it (Tock's default agent carries the public URL).
    const start = async (name: string, opsPort = '0') => {
      const e = await startService('executor', { ...env, TOCK_SERVER_NAME: name, TOCK_PUBLIC_URL: `https://${name}.example`, OPS_PORT: opsPort }, SERVICE_READY.executor, 60_000);
      executors.push(e);
      return e;
    };
    const starvedOps = await freePort();
    const starved = await start('starved', String(starvedOps));
    // Due well after the other executor is up and the bus has given up on the starved one.
    const due = Date.now() + 20_000;
    for (let job = 1; job <= RUNS; job++) {
      const run = create(DueRunSchema, { runId: `${job}:${due}`, scheduledAt: BigInt(due), occurrenceAt: BigInt(due), plannedAt: BigInt(Date.now()), planSince: 1n, target: { jobId: BigInt(job), accountId: 1n, url: `${target.url}/j/${job}`, httpMethod: 'GET', timeout: 5 } });
      await bus.publish(dueRunSubject(job), toBinary(DueRunSchema, run), { msgId: run.runId });
    }
    // Every run delivered to the only executor there is, which holds it until its instant.
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => (await jsm.consumers.info('RUNS', CONSUMERS.executors.durable)).num_ack_pending === RUNS, 'the runs held by the first executor', 10_000);
    await start('other');
    starved.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    expect(stoppedAt, 'the other executor started in time for the scenario').to.be.below(due - CONSUMERS.executors.ackWaitMs - 1000);
    // The bus redelivers the runs once the ack wait passes without a heartbeat; the other executor
    // (some of them; the rest go back to the stopped one's pull) calls them at their instant.
    await waitFor(() => target.received.some((r) => String(r.headers['user-agent']).includes('other.example')), 'the other executor to call the runs redelivered to it', 30_000);
    await sleep(1000);
    // Runs again, past the runs' instant: their timers fire at once.
    starved.child.kill('SIGCONT');
    await waitFor(() => new Set(target.received.map((r) => r.url)).size === RUNS, 'every run called', 30_000);
    await sleep(3000);
    const callers = new Map<string, string[]>();
    for (const r of target.received) callers.set(r.url, [...(callers.get(r.url) ?? []), /\+https:\/\/(\w+)\.example/.exec(String(r.headers['user-agent']))?.[1] ?? '?']);
    const doubled = [...callers].filter(([, by]) => by.length > 1);
    expect(doubled.map(([url, by]) => `${url} by ${by.join(', ')}`), 'runs called twice').to.deep.equal([]);
    expect(target.received).to.have.length(RUNS);
    // What it left uncalled is counted, for the operator's alert.
    const metrics = await (await fetch(`http://127.0.0.1:${starvedOps}/metrics`)).text();
    expect(sampleSum(metrics, 'tock_runs_lapsed_total'), 'runs lapsed in the starved executor').to.be.above(0);
  });
});
