import { expect } from 'chai';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { readFileSync } from 'node:fs';
import { inboxOf } from '../../shared/bus/natsAuth.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { executionSubject } from '../../shared/subjects/executor.ts';
import { startNatsWithUsers } from '../support/natsServer.ts';

/** The consumer name and filter of the example in docs/events.md, so the test runs what the page shows. */
function documentedExample() {
  const page = readFileSync('docs/events.md', 'utf8');
  const code = /## A subscriber of your own[\s\S]*?```ts\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
  const durable = /durable_name: '([^']+)'/.exec(code)?.[1];
  const filter = /filter_subject: '([^']+)'/.exec(code)?.[1];
  if (!durable || !filter) throw new Error('docs/events.md: the subscriber example lost its durable_name or filter_subject');
  return { durable, filter };
}

describe('the docs/events.md example subscriber (a third party on NATS, as the user subscriber of deploy/k8s/base/nats.conf)', function () {
  this.timeout(30_000);

  it('receives failed executions as tock.v1.Execution through its own durable consumer', async () => {
    const { durable, filter } = documentedExample();
    const nats = await startNatsWithUsers();
    const bus = await connectNatsBus(nats.url, { auth: { user: 'executor', pass: nats.passwords.executor, inboxPrefix: inboxOf('executor') } });
    const nc = await connect({ servers: nats.url, user: 'subscriber', pass: nats.passwords.subscriber });
    try {
      await ensureTopology(bus);
      for (const outcome of [ExecutionOutcome.SUCCEEDED, ExecutionOutcome.FAILED]) {
        const e = create(ExecutionSchema, { runId: `7:${outcome}`, jobId: 7n, accountId: 3n, outcome, time: 1_700_000_000n, error: outcome === ExecutionOutcome.FAILED ? 'HTTP 500' : '' });
        await bus.publish(executionSubject(3, 7, outcome === ExecutionOutcome.FAILED ? 'failed' : 'succeeded'), toBinary(ExecutionSchema, e), { msgId: e.runId });
      }
      // The code of docs/events.md, as the user subscriber.
      await (await jetstreamManager(nc)).consumers.add('EXECUTIONS', { durable_name: durable, ack_policy: AckPolicy.Explicit, filter_subject: filter });
      const messages = await (await jetstream(nc).consumers.get('EXECUTIONS', durable)).consume();
      const seen: string[] = [];
      for await (const m of messages) {
        const e = fromBinary(ExecutionSchema, m.data);
        seen.push(`job ${e.jobId} failed at ${e.time}: ${e.error}`);
        m.ack();
        break;
      }
      expect(seen).to.deep.equal(['job 7 failed at 1700000000: HTTP 500']);
      // The page's last step: a consumer no longer needed is deleted by its owner.
      expect(await (await jetstreamManager(nc)).consumers.delete('EXECUTIONS', durable)).to.equal(true);
    } finally {
      await nc.close();
      await bus.close();
      await nats.stop();
    }
  });
});
