import { create, toBinary } from '@bufbuild/protobuf';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { DueRunSchema, ExecutionOutcome, ExecutionSchema, type DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import { executionSubject, retrySubject } from '../../shared/subjects/executor.ts';
import { createCalledRuns, type EncodedExecution } from './calledRuns.ts';
import { countMissed, countRun } from './countRun.ts';
import { attemptId, attemptOf, executionOf, outcomeName, retryOf } from './dueRunMessages.ts';
import type { HttpResult } from './httpCall.ts';
import { retryDelayMs, shouldRetry } from './retryPolicy.ts';

type Execution = ReturnType<typeof executionOf>;

/**
 * What the executor puts on the bus for its runs: each attempt's execution event (message id =
 * the attempt's id, so a redelivered run's event is stored once) and, for a failure that may
 * pass, the next attempt. It remembers the runs it called, so a run that comes back after the bus
 * lost its ack or its event is finished, never called twice.
 */
export function createExecutionPublisher(options: { bus: Bus; clock: Clock; log: Logger; serverName: string }) {
  const { bus, clock, log, serverName } = options;
  const called = createCalledRuns();
  const encode = (run: DueRun, execution: Execution): EncodedExecution => {
    const message = create(ExecutionSchema, execution);
    const subject = executionSubject(Number(run.target!.accountId), Number(run.target!.jobId), outcomeName(message.outcome));
    return { subject, data: toBinary(ExecutionSchema, message) };
  };
  /** Every attempt of a run is its own message, event and memory entry (see attemptId). */
  const store = async (runId: string, event: EncodedExecution) => {
    await bus.publish(event.subject, event.data, { msgId: runId });
    called.stored(runId);
  };
  return {
    /** undefined: never called here; null: called and its event stored; else the event still to store. */
    calledBefore: (run: DueRun) => called.get(attemptId(run)),
    /** Stores the event of a run called before whose event the bus lost. */
    storeAgain: (run: DueRun, event: EncodedExecution) => store(attemptId(run), event),
    /** The event of a run that was not called (skipped, not made, secrets that do not open). */
    publish: (run: DueRun, execution: Execution) => store(attemptId(run), encode(run, execution)),
    /**
     * The call's event; for a failure that may pass with attempts left, the next attempt goes on
     * the bus first (a message, not a timer here: it outlives this executor; its id makes a second
     * publish after a crash a no-op), and the event says one is coming.
     */
    async finishCall(run: DueRun, result: HttpResult) {
      // The tenant's log entry says only that the target is not allowed; the operator's says what it resolved to.
      if (result.refused) log.warn('job target refused by egress policy', { jobId: String(run.target!.jobId), accountId: String(run.target!.accountId), ...result.refused });
      const execution = executionOf(run, result, serverName);
      const attempt = attemptOf(run);
      if (execution.outcome === ExecutionOutcome.FAILED && attempt <= run.target!.retries && shouldRetry(result)) {
        const now = clock.now();
        const next = retryOf(run, now + retryDelayMs(attempt, run.target!.retryBackoff, result, now));
        await bus.publish(retrySubject(Number(run.target!.jobId)), toBinary(DueRunSchema, next), { msgId: attemptId(next) });
        execution.willRetry = true;
      }
      const id = attemptId(run);
      const event = encode(run, execution);
      called.called(id, event);
      await store(id, event);
      countRun(execution.outcome === ExecutionOutcome.SUCCEEDED, Number(execution.lateByMs), result);
      countMissed(run);
    },
  };
}

export type ExecutionPublisher = ReturnType<typeof createExecutionPublisher>;
