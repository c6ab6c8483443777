import { fromBinary } from '@bufbuild/protobuf';
import type { Bus } from '../../shared/bus/bus.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Logger } from '../../shared/log.ts';
import { CONSUMERS } from '../../shared/topology.ts';
import type { JobsService } from './jobsService.ts';

/** Feeds execution outcomes from the bus into the jobs aggregate (fail counter, auto-disable, one-time done). */
export function consumeExecutions(bus: Bus, service: JobsService, log: Logger) {
  return bus.consume(CONSUMERS.jobsFailures, async (msg) => {
    // Subjects are tock.executions.<accountId>.<jobId>.<outcome>: most messages are settled by it.
    const [, , , jobId, outcome] = msg.subject.split('.');
    if (outcome === 'skipped' || (outcome === 'succeeded' && !service.successMatters(Number(jobId)))) {
      await msg.ack();
      return;
    }
    let execution;
    try {
      execution = fromBinary(ExecutionSchema, msg.data);
    } catch (error) {
      log.warn('undecodable execution message dropped', { subject: msg.subject, error });
      msg.term();
      return;
    }
    // An attempt with another one coming is not the occurrence's outcome: it is counted once, at its last attempt.
    if (!execution.willRetry && (execution.outcome === ExecutionOutcome.SUCCEEDED || execution.outcome === ExecutionOutcome.FAILED)) {
      await service.recordExecution(Number(execution.jobId), execution.runId, execution.outcome === ExecutionOutcome.SUCCEEDED, execution.manual);
    }
    await msg.ack();
  });
}
