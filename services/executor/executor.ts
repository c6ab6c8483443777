import { fromBinary } from '@bufbuild/protobuf';
import type { Bus, BusMessage, Consumer } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { DueRunSchema, type DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Sealer } from '../../shared/job/index.ts';
import type { Leases } from '../../shared/leases/leases.ts';
import type { Logger } from '../../shared/log.ts';
import { slicedQueue } from '../../shared/timeSlice.ts';
import { CONSUMERS, decodeCancel, isTestRunSubject, RUN_CANCEL_SUBJECTS } from '../../shared/topology.ts';
import { attemptId } from './dueRunMessages.ts';
import { createExecutionPublisher } from './executionPublisher.ts';
import { createFairGate } from './fairGate.ts';
import { createHeldRuns } from './heldRuns.ts';
import type { HttpCaller } from './httpCall.ts';
import { createInstantQueue } from './instantQueue.ts';
import { rememberOpened } from './openedSecrets.ts';
import { createSettleRun, type TargetedRun } from './settleRun.ts';
import { createStaleRuns } from './staleRuns.ts';
import { createTestCalls } from './testCalls.ts';

export interface ExecutorOptions {
  bus: Bus;
  leases: Leases;
  caller: HttpCaller;
  clock: Clock;
  log: Logger;
  serverName: string;
  userAgent: string;
  /** Calls in flight per account on this executor (0: no limit); see fairGate.ts. */
  accountConcurrency: number;
  /** Opens the job secrets a due run carries sealed. */
  secrets?: Sealer;
}

/** How many runs of one account may wait for a call slot, per slot: more are skipped, not held. */
const WAITING_PER_SLOT = 10;
/** Runs taken off the bus per turn of the event loop (each costs tens of microseconds). */
const ARRIVAL_SLICE = 256;
/** Without a per-account limit, how many of one account's runs due together are built ahead of their instant. */
const PREPARED_UNLIMITED = 1000;
/** Without a per-account limit, how many runs of one account may wait before the rest are skipped. */
const WAITING_UNLIMITED = 50_000;

/**
 * Consumes due runs (competing with every other replica) and settles each (settleRun.ts): fired at
 * its instant, `instances` enforced through shared leases, its execution event published, and only
 * then acked. Here: decoding, one attempt at a time per run id, and arrivals taken in slices.
 */
export async function startExecutor(options: ExecutorOptions): Promise<Consumer> {
  const { bus, clock, log, accountConcurrency } = options;
  const held = createHeldRuns(CONSUMERS.executors.ackWaitMs);
  const stale = createStaleRuns();
  // Runs wait for their instant here and leave round-robin across accounts; stop() releases them (false).
  const instants = createInstantQueue({ clock });
  const gate = createFairGate({ perAccount: accountConcurrency, maxWaiting: accountConcurrency > 0 ? accountConcurrency * WAITING_PER_SLOT : WAITING_UNLIMITED });
  const cancels = await bus.subscribe(RUN_CANCEL_SUBJECTS, (_subject, data) => {
    const notice = decodeCancel(data);
    if (notice) stale.cancel(notice);
  });
  const secrets = options.secrets && rememberOpened(options.secrets);
  const settleRun = createSettleRun({
    ...options,
    secrets,
    executions: createExecutionPublisher(options),
    held,
    instants,
    stale,
    gate,
    prepareAhead: accountConcurrency > 0 ? accountConcurrency : PREPARED_UNLIMITED,
  });

  const handling = new Map<string, Promise<void>>();
  const handle = async (msg: BusMessage) => {
    let run: DueRun;
    try {
      run = fromBinary(DueRunSchema, msg.data);
      if (!run.target) throw new Error('due run without a target');
    } catch (error) {
      log.warn('undecodable due run dropped', { subject: msg.subject, error });
      msg.term();
      return;
    }
    // A redelivery while this replica still handles the run (it was starved past the ack wait):
    // wait for that attempt and settle this delivery from its outcome instead of calling again.
    const id = attemptId(run);
    const earlier = handling.get(id);
    if (earlier) await earlier;
    let finished!: () => void;
    const handled = new Promise<void>((resolve) => (finished = resolve));
    handling.set(id, handled);
    try {
      await settleRun(msg, run as TargetedRun);
    } finally {
      if (handling.get(id) === handled) handling.delete(id);
      finished();
    }
  };

  // cron_test's calls come through the same queue, within the same shares, but are no runs.
  const testCall = createTestCalls({ ...options, secrets, gate });
  const arrivals = slicedQueue(ARRIVAL_SLICE);
  const consumer = await bus.consume(CONSUMERS.executors, async (msg) => {
    if (isTestRunSubject(msg.subject)) {
      await testCall(msg).catch((error: unknown) => log.warn('test call not answered', { subject: msg.subject, error }));
      return;
    }
    try {
      await arrivals.run(() => handle(msg));
    } catch (error) {
      // The bus or the lease store failed, not the target: let another attempt (or replica) take it.
      log.error('run failed to complete; will be redelivered', { subject: msg.subject, error });
      msg.nak(1000);
    }
  });
  return {
    async stop() {
      held.stop();
      await cancels.unsubscribe();
      const stopping = consumer.stop();
      gate.close();
      instants.close();
      await stopping;
    },
  };
}
