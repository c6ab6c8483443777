import type { Bus, BusMessage, Consumer } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Sealer } from '../../shared/job/index.ts';
import type { Leases } from '../../shared/leases/leases.ts';
import type { Logger } from '../../shared/log.ts';
import { slicedQueue } from '../../shared/timeSlice.ts';
import { CANCELS_STREAM, CONSUMERS, decodeCancel, isTestRunSubject } from '../../shared/topology.ts';
import { createBusContact } from './busContact.ts';
import { createCallsInFlight } from './callsInFlight.ts';
import { createDueRunDecoder } from './dueRunDecoder.ts';
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
  /**
   * How long stop() lets the calls in flight finish before it hands them back to the bus, cut
   * short (each may then be made again by another replica); absent: as long as they take.
   */
  drainMs?: number;
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
  const calls = createCallsInFlight();
  // Every notice the stream still holds, then each new one; after an outage, what was missed.
  await bus.ensureStream(CANCELS_STREAM);
  const cancels = await bus.watch(CANCELS_STREAM.name, ({ data }) => {
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
    inContact: createBusContact(cancels, log),
    gate,
    calls,
    prepareAhead: accountConcurrency > 0 ? accountConcurrency : PREPARED_UNLIMITED,
  });

  const handling = new Map<string, Promise<void>>();
  const decode = createDueRunDecoder();
  const handle = async (msg: BusMessage) => {
    let run: DueRun;
    try {
      run = decode(msg.data);
      if (!run.target) throw new Error('due run without a target');
    } catch (error) {
      log.warn('undecodable due run dropped', { subject: msg.subject, error });
      msg.term();
      return;
    }
    // A redelivery while this replica still handles the run (it was starved past the ack wait):
    // wait for that attempt and settle this delivery from its outcome instead of calling again.
    // In line before waiting: a third delivery then waits for the second, not with it.
    const id = attemptId(run);
    const earlier = handling.get(id);
    let finished!: () => void;
    const handled = new Promise<void>((resolve) => (finished = resolve));
    handling.set(id, handled);
    try {
      if (earlier) await earlier;
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
    // Held from its arrival, not from its turn: under load a run may wait in the arrivals queue,
    // or behind an earlier delivery of itself, for a good part of its ack wait.
    held.hold(msg);
    try {
      await arrivals.run(() => handle(msg));
    } catch (error) {
      // The bus or the lease store failed, not the target: let another attempt (or replica) take it.
      log.error('run failed to complete; will be redelivered', { subject: msg.subject, error });
      // Unless the bus may have handed it on already: then it is the other replica's.
      if (!held.lapsed(msg)) msg.nak(1000);
    } finally {
      held.release(msg);
    }
  });
  return {
    /**
     * Takes no run from here on and hands back at once every run not yet called (waiting for its
     * instant or for a slot); the calls in flight finish, their executions published and their
     * runs acked, within the drain limit. Past it, what is still in flight is handed back.
     */
    async stop() {
      const stopping = consumer.stop();
      gate.close();
      instants.close();
      log.info('executor draining', { callsInFlight: calls.size, drainSeconds: options.drainMs === undefined ? null : options.drainMs / 1000 });
      if (!(await settlesWithin(stopping, options.drainMs))) {
        const handedBack = calls.handBack();
        log.warn('drain limit reached: calls still in flight handed back to the bus, another executor makes them again', { handedBack });
        // Their answers no longer count: end them now rather than at their timeouts.
        await options.caller.close();
        await stopping;
      }
      // Only now: until its run settles, each held message is kept from redelivery to another replica.
      held.stop();
      await cancels.stop();
      log.info('executor drained');
    },
  };
}

/** True when `work` settles within `ms` (no limit: it always does, in its own time). */
async function settlesWithin(work: Promise<unknown>, ms: number | undefined): Promise<boolean> {
  if (ms === undefined) return work.then(() => true, () => true);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true as const, () => true as const), limit]);
  } finally {
    clearTimeout(timer);
  }
}
