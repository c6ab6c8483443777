import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { expect } from 'chai';
import type { Bus } from '../../../shared/bus/bus.ts';
import { connectNatsBus } from '../../../shared/bus/natsBus.ts';
import { systemClock } from '../../../shared/clock.ts';
import { DueRunSchema, ExecutionOutcome, ExecutionSchema, SkipReason, type Execution } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createMemoryLeases } from '../../../shared/leases/leases.ts';
import { createLogger } from '../../../shared/log.ts';
import { renderMetrics } from '../../../shared/metrics.ts';
import { dueRunSubject } from '../../../shared/subjects/planner.ts';
import { ensureTopology } from '../../../shared/topology.ts';
import { startExecutorService } from '../../../services/executor/service.ts';
import { sampleSum } from '../../support/metricsText.ts';
import { privateNats } from '../../support/natsServer.ts';
import { startTarget } from '../../support/target.ts';
import { waitFor } from '../../support/waitFor.ts';

/**
 * Every run an executor does not make on time, for each reason it knows, as a subscriber and a
 * scraper see it: an execution on NATS (`tock.executions.<account>.<job>.skipped`, with its reason)
 * and the counters of docs/metrics.md. Real NATS JetStream, a real target that answers slowly.
 */
describe('skipped and missed runs: events on NATS and metrics (executor, real NATS)', function () {
  this.timeout(30_000);
  let nats: Awaited<ReturnType<typeof privateNats>>;
  let nc: NatsConnection;
  let bus: Bus;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let executor: Awaited<ReturnType<typeof startExecutorService>>;
  const seen: { subject: string; execution: Execution }[] = [];

  before(async function () {
    this.timeout(20_000);
    nats = await privateNats();
    nc = await connect({ servers: nats.url });
    // What any subscriber of the public feed gets (docs/events.md).
    const sub = nc.subscribe('tock.executions.>');
    void (async () => {
      for await (const m of sub) seen.push({ subject: m.subject, execution: fromBinary(ExecutionSchema, m.data) });
    })();
    bus = await connectNatsBus(nats.url, { name: 'skipped-test' });
    await ensureTopology(bus);
    target = await startTarget((req) => (req.url.startsWith('/slow') ? { delayMs: 1500 } : {}));
    // One call in flight per account, ten waiting: the eleventh is over the account's share.
    executor = await startExecutorService({ bus, leases: createMemoryLeases(), clock: systemClock, log: createLogger('test', {}, 'silent'), allowNetworks: ['127.0.0.0/8'], accountConcurrency: 1, serverName: 'exec-1' });
  });
  after(async () => {
    await executor?.stop();
    await bus?.close();
    await nc?.close();
    await target?.close();
    await nats?.stop();
  });

  const publish = async (run: MessageInitShape<typeof DueRunSchema>) => {
    const message = create(DueRunSchema, run);
    await bus.publish(dueRunSubject(Number(message.target!.jobId)), toBinary(DueRunSchema, message), { msgId: message.runId });
  };
  const metrics = async () => (await renderMetrics()).body;
  const target_ = (jobId: number, accountId: number, path: string, instances = 0) => ({ jobId: BigInt(jobId), accountId: BigInt(accountId), url: `${target.url}${path}`, httpMethod: 'GET', timeout: 5, instances });
  const eventsOf = (jobId: number) => seen.filter((s) => s.execution.jobId === BigInt(jobId));

  it('instances reached: a skip with reason instances, counted under its label', async () => {
    const before = await metrics();
    const due = Date.now() + 300;
    // Two runs of a job with instances = 1, the first still in flight when the second is due.
    await publish({ runId: `11:${due}`, scheduledAt: BigInt(due), target: target_(11, 1, '/slow/11', 1) });
    await publish({ runId: `11:${due + 200}`, scheduledAt: BigInt(due + 200), target: target_(11, 1, '/slow/11', 1) });
    await waitFor(() => eventsOf(11).length === 2, 'both executions of job 11', 10_000);
    const skipped = eventsOf(11).find((s) => s.execution.outcome === ExecutionOutcome.SKIPPED)!;
    expect(skipped.subject).to.equal('tock.executions.1.11.skipped');
    expect(skipped.execution).to.include({ runId: `11:${due + 200}`, skipReason: SkipReason.INSTANCES });
    const after = await metrics();
    expect(sampleSum(after, 'tock_runs_skipped_total', { reason: 'instances' }) - sampleSum(before, 'tock_runs_skipped_total', { reason: 'instances' })).to.equal(1);
    expect(sampleSum(after, 'tock_runs_skipped_total', { reason: 'fair_share' })).to.equal(sampleSum(before, 'tock_runs_skipped_total', { reason: 'fair_share' }));
  });

  it("over the account's share: a skip with reason fair_share", async () => {
    const before = await metrics();
    const due = Date.now() + 500;
    // Twelve runs of account 2 due together: one called, ten wait for its slot, one is over.
    for (let j = 0; j < 12; j++) await publish({ runId: `${200 + j}:${due}`, scheduledAt: BigInt(due), target: target_(200 + j, 2, `/slow/${200 + j}`) });
    await waitFor(() => seen.filter((s) => s.execution.accountId === 2n).some((s) => s.execution.outcome === ExecutionOutcome.SKIPPED), 'the run over the share', 10_000);
    const skipped = seen.filter((s) => s.execution.accountId === 2n && s.execution.outcome === ExecutionOutcome.SKIPPED);
    expect(skipped).to.have.length(1);
    expect(skipped[0]!.subject).to.match(/^tock\.executions\.2\.2\d\d\.skipped$/);
    expect(skipped[0]!.execution.skipReason).to.equal(SkipReason.FAIR_SHARE);
    expect(skipped[0]!.execution.error).to.match(/fair share/);
    const after = await metrics();
    expect(sampleSum(after, 'tock_runs_skipped_total', { reason: 'fair_share' }) - sampleSum(before, 'tock_runs_skipped_total', { reason: 'fair_share' })).to.equal(1);
  });

  it("the account disabled: the planner's skip record becomes a skip standing for its runs, nothing called", async () => {
    const before = await metrics();
    const calls = target.received.length;
    const latest = Date.now() - 5000;
    await publish({ runId: `31:${latest}:account-disabled`, scheduledAt: BigInt(latest), occurrenceAt: BigInt(latest), missed: 4, skip: SkipReason.ACCOUNT_DISABLED, target: target_(31, 3, '/never') });
    await waitFor(() => eventsOf(31).length === 1, 'the skip record', 10_000);
    const [{ subject, execution }] = eventsOf(31) as [(typeof seen)[number]];
    expect(subject).to.equal('tock.executions.3.31.skipped');
    expect(execution).to.include({ outcome: ExecutionOutcome.SKIPPED, skipReason: SkipReason.ACCOUNT_DISABLED, missed: 4 });
    expect(execution.error).to.match(/4 scheduled runs of this job not made/);
    expect(target.received.filter((r) => r.url === '/never'), 'no call').to.have.length(0);
    expect(target.received.length).to.equal(calls);
    const after = await metrics();
    expect(sampleSum(after, 'tock_runs_skipped_total', { reason: 'account_disabled' }) - sampleSum(before, 'tock_runs_skipped_total', { reason: 'account_disabled' })).to.equal(4);
    expect(sampleSum(after, 'tock_runs_missed_total'), 'not a downtime').to.equal(sampleSum(before, 'tock_runs_missed_total'));
  });

  it('missed after downtime: the late run stands for its occurrences, counted as missed once', async () => {
    const before = await metrics();
    const latest = Date.now() - 20_000;
    await publish({ runId: `41:${latest}`, scheduledAt: BigInt(latest), occurrenceAt: BigInt(latest), missed: 7, lateByMs: 20_000n, target: target_(41, 4, '/late') });
    await waitFor(() => eventsOf(41).length === 1, 'the late run', 10_000);
    const [{ subject, execution }] = eventsOf(41) as [(typeof seen)[number]];
    expect(subject).to.equal('tock.executions.4.41.succeeded');
    expect(execution).to.include({ missed: 7, skipReason: SkipReason.UNSPECIFIED });
    const after = await metrics();
    expect(sampleSum(after, 'tock_runs_missed_total') - sampleSum(before, 'tock_runs_missed_total')).to.equal(7);
    // An ordinary run adds to neither counter.
    const now = Date.now();
    await publish({ runId: `42:${now}`, scheduledAt: BigInt(now), target: target_(42, 4, '/ordinary') });
    await waitFor(() => eventsOf(42).length === 1, 'the ordinary run', 10_000);
    const last = await metrics();
    expect(sampleSum(last, 'tock_runs_missed_total')).to.equal(sampleSum(after, 'tock_runs_missed_total'));
    expect(sampleSum(last, 'tock_runs_skipped_total')).to.equal(sampleSum(after, 'tock_runs_skipped_total'));
  });
});
