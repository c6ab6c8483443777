import { fromBinary } from '@bufbuild/protobuf';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { handleCommand } from '../../shared/eventStore/handleCommand.ts';
import { ExecutionOutcome, ExecutionSchema, SkipReason } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Logger } from '../../shared/log.ts';
import { JOB_NOTIFY_EVENTS_KEPT, jobNotifyDecider, jobNotifyStream } from '../../shared/notify/index.ts';
import { skipReasonName } from '../../shared/skipReasons.ts';
import { CONSUMERS } from '../../shared/topology.ts';
import type { NotifierView } from './notifierView.ts';

/**
 * Feeds execution events into each job's notification stream (`notifyjob-<jobId>`): the rules
 * decide there, and what they decide is stored before the message is acked, so a crash between
 * the two only replays a run the stream already knows (ignored by run id).
 */
export function consumeExecutions(bus: Bus, store: EventStore, view: NotifierView, clock: Clock, log: Logger) {
  const trimmed = new Set<number>();
  return bus.consume(CONSUMERS.notifier, async (msg) => {
    // Subjects are tock.executions.<accountId>.<jobId>.<outcome>: most healthy runs are settled by it.
    const [, , , jobIdText, outcome] = msg.subject.split('.');
    const jobId = Number(jobIdText);
    // A job with notifySkipped hears its skipped runs, and its late runs after downtime (decoded to see).
    const skipMatters = view.skipMatters(jobId);
    if ((outcome === 'skipped' && !skipMatters) || (outcome === 'succeeded' && !skipMatters && !view.successMatters(jobId))) {
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
    const job = view.facts(Number(execution.jobId), { accountEnabled: execution.skipReason === SkipReason.ACCOUNT_DISABLED });
    const skipped = execution.outcome === ExecutionOutcome.SKIPPED;
    const ordinary = execution.outcome === ExecutionOutcome.SUCCEEDED && execution.missed === 0 && !view.successMatters(job?.id ?? 0);
    if (!job || ordinary || (skipped && !skipReasonName(execution.skipReason)) || execution.outcome === ExecutionOutcome.UNSPECIFIED) {
      await msg.ack();
      return;
    }
    const facts = {
      runId: execution.runId,
      time: Number(execution.time),
      failed: execution.outcome === ExecutionOutcome.FAILED,
      httpStatus: execution.httpStatus,
      error: execution.error,
      output: execution.output,
      downloaded: Number(execution.downloaded),
      executionTime: execution.executionTime,
      ...(skipped ? { skipReason: skipReasonName(execution.skipReason)! } : {}),
      ...(execution.missed ? { missed: execution.missed } : {}),
    };
    if (!trimmed.has(job.id)) {
      // The rules need the recent past only (counts are absolute in each event): the stream must not grow with every failure.
      await store.setStreamMaxCount(jobNotifyStream(job.id), JOB_NOTIFY_EVENTS_KEPT);
      trimmed.add(job.id);
    }
    const result = await handleCommand(store, { stream: jobNotifyStream(job.id), decider: jobNotifyDecider, command: { job, execution: facts }, now: () => clock.now() });
    // The view must know this run's outcome before the next one is looked at (the fast path above reads it).
    await view.waitFor(result.position);
    await msg.ack();
  });
}
