import { expect } from 'chai';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { randomInt } from 'node:crypto';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { executionSubject } from '../../shared/subjects/executor.ts';
import { natsForThisSuite } from '../support/natsServer.ts';


describe('the docs/events.md example subscriber (a third party on NATS)', () => {
  const nats = natsForThisSuite();
  after(() => nats.stop());
  it('receives failed executions as tock.v1.Execution through its own durable consumer', async () => {
    const bus = await connectNatsBus(nats.url);
    await ensureTopology(bus);
    const account = randomInt(1_000_000, 2_000_000);
    const durable = `readme-${account}`;
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    try {
      // The code of docs/events.md, scoped to one made-up account so it sees only this test's messages.
      await jsm.consumers.add('EXECUTIONS', { durable_name: durable, ack_policy: AckPolicy.Explicit, filter_subject: `tock.executions.${account}.*.failed` });
      for (const outcome of [ExecutionOutcome.SUCCEEDED, ExecutionOutcome.FAILED]) {
        const e = create(ExecutionSchema, { runId: `7:${outcome}`, jobId: 7n, accountId: BigInt(account), outcome, time: 1_700_000_000n, error: outcome === ExecutionOutcome.FAILED ? 'HTTP 500' : '' });
        await bus.publish(executionSubject(account, 7, outcome === ExecutionOutcome.FAILED ? 'failed' : 'succeeded'), toBinary(ExecutionSchema, e), { msgId: e.runId + account });
      }
      const messages = await (await jetstream(nc).consumers.get('EXECUTIONS', durable)).consume();
      const seen: string[] = [];
      for await (const m of messages) {
        const e = fromBinary(ExecutionSchema, m.data);
        seen.push(`job ${e.jobId} failed at ${e.time}: ${e.error}`);
        m.ack();
        break;
      }
      expect(seen).to.deep.equal(['job 7 failed at 1700000000: HTTP 500']);
    } finally {
      await jsm.consumers.delete('EXECUTIONS', durable).catch(() => undefined);
      await nc.close();
      await bus.close();
    }
  });
});
