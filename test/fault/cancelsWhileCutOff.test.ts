import { create, toBinary } from '@bufbuild/protobuf';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bus } from '../../shared/bus/bus.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { systemClock } from '../../shared/clock.ts';
import { DueRunSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { createMemoryLeases } from '../../shared/leases/leases.ts';
import { createLogger } from '../../shared/log.ts';
import { dueRunSubject, encodeCancel, runCancelSubject } from '../../shared/subjects/planner.ts';
import { CANCELS_STREAM, ensureTopology } from '../../shared/topology.ts';
import { startExecutorService } from '../../services/executor/service.ts';
import { createCancelNotices } from '../../services/planner/cancelNotices.ts';
import { runsDrained } from '../support/busDrained.ts';
import { natsServer } from '../support/natsServer.ts';
import { freePort } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { tcpLink } from '../support/tcpLink.ts';
import { sleep, waitFor } from '../support/waitFor.ts';

const silent = createLogger('test', {}, 'silent');

/**
 * A job changed while an executor could not hear of it: the executor held a run planned from the
 * old version, and must not make it. Cut off from NATS (a partition it does not notice), started
 * after the change, or with NATS itself restarting while the planner's notice waits to be stored:
 * the old version is never called, and the run planned from the new one is made once. Real
 * nats-server, real executor, real HTTP target.
 */
describe('cancel notices reach an executor that was cut off when the job changed', function () {
  this.timeout(90_000);
  let dir: string;
  let nats: ReturnType<typeof natsServer>;
  let bus: Bus;
  let target: Awaited<ReturnType<typeof startTarget>>;
  const closing: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tock-cancels-'));
    nats = natsServer(await freePort(), dir);
    await nats.start();
    // The planner's side and the test's: a connection of its own, never cut.
    bus = await connectNatsBus(nats.url, { name: 'planner-side', log: silent });
    await ensureTopology(bus);
    await bus.ensureStream(CANCELS_STREAM);
    target = await startTarget();
  });
  afterEach(async () => {
    for (const close of closing.reverse()) await close().catch(() => undefined);
    closing.length = 0;
    await bus?.close().catch(() => undefined);
    await target?.close();
    await nats?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  const executorOn = async (url: string) => {
    const executorBus = await connectNatsBus(url, { name: 'executor', log: silent });
    const executor = await startExecutorService({ bus: executorBus, leases: createMemoryLeases(), clock: systemClock, log: silent, allowNetworks: ['127.0.0.0/8'], serverName: 'exec' });
    closing.push(() => executorBus.close(), () => executor.stop());
    return executor;
  };
  /** A run of job 7 at `due`, planned from the version the job had at `planSince`, calling /v<version>. */
  const publishRun = async (due: number, planSince: number, version: number) => {
    const run = create(DueRunSchema, {
      runId: `7:${due}`,
      scheduledAt: BigInt(due),
      occurrenceAt: BigInt(due),
      plannedAt: BigInt(Date.now()),
      planSince: BigInt(planSince),
      target: { jobId: 7n, accountId: 1n, url: `${target.url}/v${version}`, httpMethod: 'GET', timeout: 5 },
    });
    await bus.publish(dueRunSubject(7), toBinary(DueRunSchema, run), { msgId: `${run.runId}@${planSince}` });
  };
  /** What the planner stores for an edit at `since`: runs after `from` planned before it are stale. */
  const cancel = (since: number, from: number) => bus.publish(runCancelSubject(7), encodeCancel({ jobId: 7, before: Date.now(), since, from }));
  const calls = () => target.received.map((r) => r.url);

  it('cut off from NATS when the job is edited: the old version is not called, the new one once', async () => {
    const link = await tcpLink(Number(new URL(nats.url).port));
    closing.push(() => link.close());
    await executorOn(link.url);
    // Healed first when the test ends early, so the executor can stop.
    closing.push(async () => link.heal());
    const due = Date.now() + 2500;
    await publishRun(due, 1000, 1);
    await sleep(500); // held by the executor until its instant
    link.block();
    const edited = Date.now();
    await cancel(edited, edited);
    await publishRun(due, edited, 2);
    await sleep(due - Date.now() + 1500); // the instant passes while the executor is cut off
    expect(calls(), 'nothing called by an executor that cannot know of the edit').to.deep.equal([]);
    link.heal();
    await waitFor(() => calls().length > 0, 'the run of the new version', 30_000);
    await runsDrained(nats.url);
    expect(calls()).to.deep.equal(['/v2']);
  });

  it('started after the edit: the notice stored before it started still drops the old run', async () => {
    const due = Date.now() + 1500;
    await publishRun(due, 1000, 1);
    const edited = Date.now();
    await cancel(edited, edited);
    await publishRun(due, edited, 2);
    await executorOn(nats.url);
    await waitFor(() => calls().length > 0, 'the run of the new version', 30_000);
    await runsDrained(nats.url);
    expect(calls()).to.deep.equal(['/v2']);
  });

  it('NATS restarting when the job is paused: the notice is stored once it is back, and the held run is not made', async () => {
    await executorOn(nats.url);
    const due = Date.now() + 2000;
    await publishRun(due, 1000, 1);
    await sleep(500);
    await nats.kill();
    // The planner applies the pause while NATS is away: its notice is stored when NATS is back.
    const planner = createCancelNotices({ bus, clock: systemClock, log: silent });
    closing.push(async () => planner.stop());
    const paused = Date.now();
    planner.cancel(7, paused, paused);
    await sleep(due - Date.now() + 1000);
    await nats.start();
    const nc = await connect({ servers: nats.url, name: 'test-reader' });
    closing.push(() => nc.close());
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => (await jsm.streams.info(CANCELS_STREAM.name)).state.messages === 1, 'the notice stored', 30_000);
    await runsDrained(nc, 60_000);
    expect(calls(), 'a paused job called').to.deep.equal([]);
  });
});
