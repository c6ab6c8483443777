import { toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import type { BusMessage } from '../../../shared/bus/bus.ts';
import { ExecutionSchema, type Execution } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createLogger } from '../../../shared/log.ts';
import type { LogsView } from '../../../services/logs/logsView.ts';
import { openSqliteLogsView } from '../../../services/logs/sqliteLogsView.ts';
import { createRecorder } from '../../../services/logs/recorder.ts';
import { execution } from './executions.ts';
import { nth } from '../../support/nth.ts';

type Settled = 'ack' | 'term' | `nak ${number}` | undefined;

/** A bus message that remembers how it was settled. */
function message(data: Uint8Array, seq: number) {
  const m = { settled: undefined as Settled };
  const msg: BusMessage = {
    subject: 'tock.executions.1.1.succeeded',
    data,
    headers: {},
    seq,
    deliveryCount: 1,
    ack: async () => void (m.settled = 'ack'),
    nak: (delayMs) => void (m.settled = `nak ${delayMs ?? 0}`),
    term: () => void (m.settled = 'term'),
    working: () => undefined,
  };
  return Object.assign(m, { msg });
}
const encoded = (e: Execution, seq: number) => message(toBinary(ExecutionSchema, e), seq);

describe('logs recorder', () => {
  const log = createLogger('logs-test', {}, 'silent');
  let view: LogsView;
  beforeEach(() => (view = openSqliteLogsView(':memory:')));
  afterEach(() => view.close());

  it('writes messages delivered together in one transaction, then acks each, ids from the stream sequence', async () => {
    let transactions = 0;
    const recordMany = view.recordMany.bind(view);
    view.recordMany = (batch) => (transactions++, recordMany(batch));
    const handle = createRecorder(view, log);
    const msgs = [encoded(execution({ runId: 'a' }), 10), encoded(execution({ runId: 'b', time: 1n }), 11), encoded(execution({ runId: 'a' }), 12)];
    await Promise.all(msgs.map(async (m) => handle(m.msg)));
    expect(transactions).to.equal(1);
    expect(msgs.map((m) => m.settled)).to.deep.equal(['ack', 'ack', 'ack']);
    expect((await view.query({ accountId: 1n })).map((e) => [e.execution.runId, e.id])).to.deep.equal([['a', 10], ['b', 11]]);
  });

  it('terminates what is not an Execution, or cannot be recorded, and goes on', async () => {
    const handle = createRecorder(view, log);
    const garbage = message(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]), 1);
    const noRunId = encoded(execution({ runId: '' }), 2);
    const noJob = encoded(execution({ runId: 'x', jobId: 0n }), 3);
    const fine = encoded(execution({ runId: 'fine' }), 4);
    await Promise.all([garbage, noRunId, noJob, fine].map(async (m) => handle(m.msg)));
    expect([garbage, noRunId, noJob, fine].map((m) => m.settled)).to.deep.equal(['term', 'term', 'term', 'ack']);
    expect((await view.size()).log).to.equal(1);
  });

  it('stores an execution as it was sent: fields this version does not know read back unchanged', async () => {
    const handle = createRecorder(view, log);
    // Field 99, varint 7: what a newer executor might add.
    const sent = new Uint8Array([...toBinary(ExecutionSchema, execution({ runId: 'newer' })), 0x98, 0x06, 0x07]);
    await handle(message(sent, 1).msg);
    const stored = nth(await view.query({ accountId: 1n }));
    expect(stored.execution.$unknown?.map((u) => [u.no, [...u.data]])).to.deep.equal([[99, [0x07]]]);
  });

  it('hands the batch back for a later redelivery when the database fails', async () => {
    const handle = createRecorder(view, log);
    await view.close();
    const m = encoded(execution({ runId: 'a' }), 1);
    await handle(m.msg);
    expect(m.settled).to.equal('nak 5000');
  });
});
