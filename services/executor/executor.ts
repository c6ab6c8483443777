import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Bus, BusMessage, Consumer } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { DueRunSchema, ExecutionOutcome, ExecutionSchema, type DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Leases } from '../../shared/leases/leases.ts';
import type { Logger } from '../../shared/log.ts';
import { CONSUMERS, decodeCancel, executionSubject, retrySubject, RUN_CANCEL_SUBJECTS } from '../../shared/topology.ts';
import { createCalledRuns, type EncodedExecution } from './calledRuns.ts';
import { attemptId, attemptOf, executionOf, failedExecution, fireAt, outcomeName, requestFor, retryNotMade, retryOf, skippedExecution } from './executeRun.ts';
import { EnvelopeError } from '../../shared/crypto/envelope.ts';
import type { Sealer } from '../../shared/job/index.ts';
import { createFairGate } from './fairGate.ts';
import { createInstantQueue } from './instantQueue.ts';
import { rememberOpened } from './openedSecrets.ts';
import { createSlices } from './slices.ts';
import type { HttpCaller, HttpResult } from './httpCall.ts';
import { recordRun, recordSkip } from './recordRun.ts';
import { retryDelayMs, shouldRetry } from './retryPolicy.ts';
import { createStaleRuns } from './staleRuns.ts';

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
 * Consumes due runs (competing with every other replica), fires each at its instant, enforces
 * `instances` through shared leases, publishes the execution event (message id = run id, so a
 * redelivered run's event is stored once), and only then acks the due run.
 */
export async function startExecutor(options: ExecutorOptions): Promise<Consumer> {
  const { bus, leases, caller, clock, log, serverName, userAgent, accountConcurrency } = options;
  const secrets = options.secrets && rememberOpened(options.secrets);
  const gate = createFairGate({ perAccount: accountConcurrency, maxWaiting: accountConcurrency > 0 ? accountConcurrency * WAITING_PER_SLOT : WAITING_UNLIMITED });
  // One timer for every held run (not one each): thousands are held at the top of a minute.
  const held = new Map<BusMessage, number>();
  const heartbeatMs = CONSUMERS.executors.ackWaitMs / 3;
  const heartbeat = setInterval(() => {
    const now = Date.now();
    for (const [m, since] of held) {
      if (now - since < heartbeatMs) continue;
      m.working();
      held.set(m, now);
    }
  }, heartbeatMs / 2);
  heartbeat.unref();
  const stale = createStaleRuns();
  // Runs wait for their instant here and leave round-robin across accounts; stop() releases them (false).
  const instants = createInstantQueue({ clock });
  const prepareAhead = accountConcurrency > 0 ? accountConcurrency : PREPARED_UNLIMITED;
  const cancels = await bus.subscribe(RUN_CANCEL_SUBJECTS, (_subject, data) => {
    const notice = decodeCancel(data);
    if (notice) stale.cancel(notice.jobId, notice.before, notice.retries === true);
  });

  const called = createCalledRuns();
  const handling = new Map<string, Promise<void>>();
  const encode = (run: DueRun, execution: ReturnType<typeof executionOf>): EncodedExecution => {
    const message = create(ExecutionSchema, execution);
    const subject = executionSubject(Number(run.target!.accountId), Number(run.target!.jobId), outcomeName(message.outcome));
    return { subject, data: toBinary(ExecutionSchema, message) };
  };
  /** Every attempt of a run is its own message, event and memory entry (see attemptId). */
  const store = async (runId: string, event: EncodedExecution) => {
    await bus.publish(event.subject, event.data, { msgId: runId });
    called.stored(runId);
  };
  const publish = (run: DueRun, execution: ReturnType<typeof executionOf>) => store(attemptId(run), encode(run, execution));

  /**
   * The call's event; for a failure that may pass with attempts left, the next attempt goes on
   * the bus first (a message, not a timer here: it outlives this executor; its id makes a second
   * publish after a crash a no-op), and the event says one is coming.
   */
  const finishCall = async (run: DueRun, result: HttpResult) => {
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
    recordRun(execution.outcome === ExecutionOutcome.SUCCEEDED, Number(execution.lateByMs), result);
  };

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
      await settle(msg, run as DueRun & { target: NonNullable<DueRun['target']> });
    } finally {
      if (handling.get(id) === handled) handling.delete(id);
      finished();
    }
  };

  /** The run's request, or why its secrets do not open (a key this executor lacks, or an altered value). */
  const prepare = (run: DueRun) => {
    try {
      return requestFor(run, userAgent, secrets);
    } catch (error) {
      if (error instanceof EnvelopeError) return error;
      throw error;
    }
  };
  // The run fails, visibly, instead of calling without credentials.
  const secretsFailed = async (run: DueRun, error: EnvelopeError) => {
    log.warn('job secrets do not open', { jobId: String(run.target!.jobId), error: error.message });
    await publish(run, failedExecution(run, serverName, clock.now(), `job secrets: ${error.message}`));
  };

  const settle = async (msg: BusMessage, run: DueRun & { target: NonNullable<DueRun['target']> }) => {
    const known = called.get(attemptId(run));
    if (known !== undefined) {
      // Called here already; its ack or its event was lost with the bus: finish it, never call twice.
      if (known) await store(attemptId(run), known);
      await msg.ack();
      return;
    }
    // Keep the message ours while we wait for its instant and while the call runs.
    held.set(msg, Date.now());
    try {
      const due = fireAt(run);
      const accountId = Number(run.target.accountId);
      // Built while the run waits for its instant (it depends on the scheduled time only), so the
      // instant is spent sending; its connection is opened meanwhile too. Only for as many of an
      // account's runs as its share can call then: the rest may be skipped, and building theirs
      // would hold back every other account's runs arriving behind them.
      let spec = due > clock.now() && instants.waiting(due, accountId) < prepareAhead ? prepare(run) : undefined;
      if (spec instanceof EnvelopeError) return (await secretsFailed(run, spec), msg.ack());
      const went = spec ? caller.expect(spec.url, due) : undefined;
      const onTime = await instants.wait(due, accountId);
      went?.();
      // Stopping before its instant: hand it back now for another replica (or the next start).
      if (!onTime) return msg.nak();
      // Planned ahead, then the job changed (paused, edited, deleted...): the planner re-planned it.
      if (stale.isStale(Number(run.target.jobId), Number(run.plannedAt), run.manual, attemptOf(run) > 1)) {
        await msg.ack();
        return;
      }
      const limit = run.target.instances;
      const leaseKey = `job-${run.target.jobId}`;
      // The lease outlives the longest possible call (timeout, one connect retry), so a dead executor's slot frees itself.
      if (limit > 0 && !(await leases.acquire(leaseKey, attemptId(run), limit, (run.target.timeout * 2 + 60) * 1000))) {
        await publish(run, attemptOf(run) > 1 ? retryNotMade(run, serverName, clock.now()) : skippedExecution(run, serverName, clock.now()));
        recordSkip();
        await msg.ack();
        return;
      }
      try {
        const release = await gate.enter(accountId);
        if (release === 'closed') return msg.nak();
        if (release === 'full') {
          const { inFlight, waiting } = gate.load(accountId);
          const why = `skipped: this account already has ${inFlight} calls in progress and ${waiting} runs waiting on this executor (its fair share)`;
          await publish(run, skippedExecution(run, serverName, clock.now(), why));
          recordSkip();
        } else {
          try {
            // A run past its account's share was not built ahead: built now it has a slot.
            spec ??= prepare(run);
            if (spec instanceof EnvelopeError) await secretsFailed(run, spec);
            else await finishCall(run, await caller.call(spec));
          } finally {
            release();
          }
        }
      } finally {
        if (limit > 0) await leases.release(leaseKey, attemptId(run)).catch((error) => log.warn('lease release failed', { error }));
      }
      await msg.ack();
    } finally {
      held.delete(msg);
    }
  };

  const arrivals = createSlices(ARRIVAL_SLICE);
  const consumer = await bus.consume(CONSUMERS.executors, async (msg) => {
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
      clearInterval(heartbeat);
      await cancels.unsubscribe();
      const stopping = consumer.stop();
      gate.close();
      instants.close();
      await stopping;
    },
  };
}
