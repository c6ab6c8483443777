import { fromBinary } from '@bufbuild/protobuf';
import type { BusMessage, MessageHandler } from '../../shared/bus/bus.ts';
import { ExecutionSchema, type Execution } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Logger } from '../../shared/log.ts';
import type { LogsView } from './logsView.ts';
import { invalidExecution } from './search.ts';

/** A batch is written once this many messages wait, or when the event loop next turns. */
const MAX_BATCH = 1000;
/** After a failed write (disk full, locked file) the batch comes back after this long, not at once. */
const RETRY_DELAY_MS = 5000;

interface Waiting {
  execution: Execution;
  msg: BusMessage;
  done: () => void;
}

/**
 * The bus handler of the logs service. Messages delivered together (a NATS pull batch, a replay)
 * are written in one transaction and acked after it commits: a crash before the commit
 * means a redelivery, which the view de-duplicates by run id. A message that is not an Execution
 * is logged and terminated, so it is neither retried forever nor able to stop the consumer.
 */
export function createRecorder(view: LogsView, log: Logger): MessageHandler {
  let waiting: Waiting[] = [];
  let scheduled = false;

  const flush = async () => {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    try {
      const fresh = await view.recordMany(batch.map((w) => ({ execution: w.execution, id: w.msg.seq, data: w.msg.data })));
      const duplicates = fresh.filter((f) => !f).length;
      if (duplicates > 0) log.debug('duplicate executions ignored', { count: duplicates });
      for (const w of batch) void w.msg.ack().catch((error) => log.warn('ack failed; the execution will be redelivered', { seq: w.msg.seq, error }));
    } catch (error) {
      log.error('recording executions failed; they will be redelivered', { count: batch.length, error });
      for (const w of batch) w.msg.nak(RETRY_DELAY_MS);
    }
    for (const w of batch) w.done();
  };

  return (msg) => {
    let execution: Execution;
    try {
      execution = fromBinary(ExecutionSchema, msg.data);
    } catch (error) {
      log.warn('message is not an Execution; dropped', { subject: msg.subject, seq: msg.seq, error });
      return msg.term();
    }
    const invalid = invalidExecution(execution);
    if (invalid) {
      log.warn('execution cannot be recorded; dropped', { subject: msg.subject, seq: msg.seq, runId: execution.runId.slice(0, 80), why: invalid });
      return msg.term();
    }
    return new Promise<void>((done) => {
      waiting.push({ execution, msg, done });
      if (waiting.length >= MAX_BATCH) void flush();
      else if (!scheduled) {
        scheduled = true;
        // setImmediate, not a microtask: lets every message already received join this batch.
        setImmediate(() => void flush());
      }
    });
  };
}
