import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { AckPolicy, jetstream, jetstreamManager, type ConsumerMessages } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboxOf } from '../../shared/bus/natsAuth.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import { DueRunSchema, ExecutionOutcome, ExecutionSchema, type Execution } from '../../shared/gen/tock/v1/events_pb.ts';
import { dueRunSubject } from '../../shared/subjects/planner.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { startNatsWithUsers } from '../support/natsServer.ts';
import { distributedEnv, SERVICE_READY, startService, type ServiceProcess } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { sleep, waitFor } from '../support/waitFor.ts';

const JOBS = 4;
const SECONDS = 8;
const DRAIN_SECONDS = 8;
/** How long before its instant each run goes on the bus, as the planner's TOCK_DISPATCH_LEAD_MS does. */
const LEAD_MS = 1500;

/**
 * SIGTERM to one of two executor processes while jobs run every second and each call takes one to
 * two seconds: it takes no run from then on, hands back those it held for their instant, lets its
 * calls in flight finish (each recorded once) and exits 0 within its drain limit; the other makes
 * the rest. The test plays the planner (due runs published as the `planner` NATS user, each with
 * its run id as message id) and reads the EXECUTIONS stream as a third-party subscriber would.
 */
describe('graceful executor shutdown (SIGTERM mid-run, two executor processes, a real NATS with the shipped users)', function () {
  this.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-drain-fault-'));
  const executors = new Map<string, ServiceProcess>();
  const conns: NatsConnection[] = [];
  let nats: Awaited<ReturnType<typeof startNatsWithUsers>>;
  let planner: Bus;
  let feed: ConsumerMessages;
  const executions: Execution[] = [];
  // Each call is answered after one to two seconds.
  const target = startTarget(() => ({ delayMs: 1000 + Math.floor(Math.random() * 1000) }));

  before(async () => {
    nats = await startNatsWithUsers();
    const env = await distributedEnv(dataDir, { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_EXECUTOR_DRAIN_SECONDS: String(DRAIN_SECONDS) });
    planner = await connectNatsBus(nats.url, { auth: { user: 'planner', pass: nats.passwords.planner, inboxPrefix: inboxOf('planner') } });
    await ensureTopology(planner);
    await Promise.all(['executor-1', 'executor-2'].map(async (name) => {
      executors.set(name, await startService('executor', { ...env, ...nats.envOf('executor'), TOCK_SERVER_NAME: name }, SERVICE_READY.executor, 90_000));
    }));
    const nc = await connect({ servers: nats.url, user: 'subscriber', pass: nats.passwords.subscriber });
    conns.push(nc);
    await (await jetstreamManager(nc)).consumers.add('EXECUTIONS', { durable_name: 'sub-executions', ack_policy: AckPolicy.Explicit, filter_subject: 'tock.executions.>' });
    feed = await (await jetstream(nc).consumers.get('EXECUTIONS', 'sub-executions')).consume();
    void (async () => {
      for await (const m of feed) {
        executions.push(fromBinary(ExecutionSchema, m.data));
        m.ack();
      }
    })();
  });

  after(async () => {
    await feed?.close();
    for (const nc of conns) await nc.close().catch(() => undefined);
    await planner?.close();
    for (const p of executors.values()) await p.kill('SIGKILL');
    await (await target).close();
    await nats?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes its calls in flight, records each once, exits 0 within the limit; every occurrence is made exactly once', async () => {
    const t = await target;
    const first = Math.ceil(Date.now() / 1000) + 2;
    const publishing = (async () => {
      for (let second = first; second < first + SECONDS; second++) {
        const due = second * 1000;
        await sleep(due - LEAD_MS - Date.now());
        for (let job = 1; job <= JOBS; job++) {
          const run = create(DueRunSchema, {
            runId: `${job}:${due}`,
            scheduledAt: BigInt(due),
            occurrenceAt: BigInt(due),
            plannedAt: BigInt(Date.now()),
            target: { jobId: BigInt(job), accountId: 1n, url: `${t.url}/j/${job}`, httpMethod: 'GET', timeout: 10 },
          });
          await planner.publish(dueRunSubject(job), toBinary(DueRunSchema, run), { msgId: run.runId });
        }
      }
    })();

    // Mid-window, with calls in flight on both executors and runs held for the next instants.
    await sleep(first * 1000 + 3500 - Date.now());
    const leaving = executors.get('executor-1')!;
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => leaving.child.once('exit', (code, signal) => resolve({ code, signal })));
    const signalledAt = Date.now();
    leaving.child.kill('SIGTERM');
    const exit = await exited;
    const exitMs = Date.now() - signalledAt;
    await publishing;

    const runIds = Array.from({ length: SECONDS }, (_, i) => Array.from({ length: JOBS }, (_, j) => `${j + 1}:${(first + i) * 1000}`)).flat();
    await waitFor(() => new Set(t.received.map((r) => r.headers['x-tock-run-id'])).size >= runIds.length, 'every occurrence to be called', 20_000);
    await waitFor(() => new Set(executions.map((e) => e.runId)).size >= runIds.length, 'every occurrence recorded', 10_000);
    await sleep(1000); // a doubled call or record would show by now

    const output = leaving.output.join('');
    const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; time: string; callsInFlight?: number });
    const draining = lines.find((l) => l.msg === 'executor draining');
    const fromLeaving = executions.filter((e) => e.server === 'executor-1');
    const stoppedAt = draining ? Date.parse(draining.time) : NaN;
    const inFlight = fromLeaving.filter((e) => Number(e.startTimeMs) <= stoppedAt && Number(e.startTimeMs) + e.executionTime * 1000 >= stoppedAt);
    console.log(`      executor-1 exited ${(exitMs / 1000).toFixed(1)} s after SIGTERM (drain limit ${DRAIN_SECONDS} s) with ${draining?.callsInFlight} calls in flight; it made ${fromLeaving.length} of ${runIds.length} occurrences`);

    expect(exit, `executor-1's exit\n${output}`).to.deep.equal({ code: 0, signal: null });
    expect(exitMs, 'exited within its drain limit').to.be.below((DRAIN_SECONDS + 5) * 1000);
    expect(output).to.match(/executor drained/);
    expect(output, 'nothing cut short').not.to.match(/drain limit reached/);
    expect(draining?.callsInFlight, 'calls were in flight at the SIGTERM').to.be.above(0);
    expect(inFlight.length, 'the calls in flight at the SIGTERM, recorded').to.be.above(0);
    expect(inFlight.map((e) => [e.outcome, e.httpStatus]), 'each finished, not cut short').to.deep.equal(inFlight.map(() => [ExecutionOutcome.SUCCEEDED, 200]));
    expect(fromLeaving.filter((e) => Number(e.startTimeMs) > stoppedAt), 'calls executor-1 started after it began to stop').to.deep.equal([]);

    const called = new Map<string, number>();
    for (const r of t.received) called.set(String(r.headers['x-tock-run-id']), (called.get(String(r.headers['x-tock-run-id'])) ?? 0) + 1);
    expect([...called].filter(([, n]) => n !== 1), 'occurrences called more than once').to.deep.equal([]);
    expect([...called.keys()].sort()).to.deep.equal([...runIds].sort());
    const recorded = new Map<string, number>();
    for (const e of executions) recorded.set(e.runId, (recorded.get(e.runId) ?? 0) + 1);
    expect([...recorded].filter(([, n]) => n !== 1), 'occurrences recorded more than once').to.deep.equal([]);
    expect([...recorded.keys()].sort()).to.deep.equal([...runIds].sort());
  });
});
