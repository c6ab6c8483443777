import { fromBinary } from '@bufbuild/protobuf';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { expect } from 'chai';
import type { Bus } from '../../../shared/bus/bus.ts';
import { connectNatsBus } from '../../../shared/bus/natsBus.ts';
import { FakeClock } from '../../../shared/clock.ts';
import type { EventStore } from '../../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { DueRunSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { RUNS_STREAM } from '../../../shared/topology.ts';
import { startPlannerService } from '../../../services/planner/service.ts';
import { MINUTE, SECOND, T0, jobCreated, runRequested } from '../../unit/planner/jobEvents.ts';
import { silent, tick } from './harness.ts';
import { privateNats } from '../../support/natsServer.ts';


describe('planner (integration: real NATS JetStream)', function () {
  let nc: NatsConnection | undefined;
  let jsm: JetStreamManager;
  let store: EventStore;
  const buses: Bus[] = [];
  const servers: Awaited<ReturnType<typeof startPlannerService>>[] = [];

  let nats: Awaited<ReturnType<typeof privateNats>>;

  before(async function () {
    this.timeout(20_000);
    nats = await privateNats();
    nc = await connect({ servers: nats.url, timeout: 2000 });
    jsm = await jetstreamManager(nc);
  });

  after(async () => {
    for (const s of servers) await s.stop();
    for (const b of buses) await b.close();
    await store?.close();
    await nc?.close();
    await nats?.stop();
  });

  it('two planner replicas, each with its own NATS connection, give one message per occurrence', async () => {
    const clock = new FakeClock(T0);
    store = openSqliteEventStore(':memory:');
    for (const id of [1, 2, 3]) {
      await store.appendToStream(`cronjob-${id}`, [{ type: 'JobCreated', data: jobCreated(id, T0, { expression: '* * * * *' }).data }]);
    }
    for (let i = 0; i < 2; i++) {
      const bus = await connectNatsBus(nats.url, { name: `planner-test-${i}` });
      buses.push(bus);
      servers.push(await startPlannerService({ store, bus, clock, log: silent, address: '127.0.0.1:0' }));
    }
    const { position } = await store.appendToStream('cronjob-2', [{ type: 'RunRequested', data: runRequested(T0, '2:manual:1', T0 + 30 * SECOND).data }]);
    while (servers.some((s) => s.planner.projection.position < position)) await tick();

    await clock.advance(3 * MINUTE);
    for (const s of servers) await s.planner.idle();

    const info = await jsm.streams.info(RUNS_STREAM.name);
    const runIds: string[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(RUNS_STREAM.name, { seq });
      if (m) runIds.push(fromBinary(DueRunSchema, m.data).runId);
    }
    const expected = ['2:manual:1'];
    for (const k of [1, 2, 3]) for (const id of [1, 2, 3]) expected.push(`${id}:${T0 + k * MINUTE}`);
    expect(runIds).to.have.members(expected);
    expect(info.state.messages).to.equal(expected.length);
    const [a, b] = servers.map((s) => s.planner.stats());
    expect(a!.published + b!.published).to.equal(2 * expected.length);
    expect(a!.duplicates + b!.duplicates).to.equal(expected.length);
  });
});
