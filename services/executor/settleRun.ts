import type { BusMessage } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { EnvelopeError } from '../../shared/crypto/envelope.ts';
import type { DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Sealer } from '../../shared/job/index.ts';
import type { Leases } from '../../shared/leases/leases.ts';
import type { Logger } from '../../shared/log.ts';
import type { BusContact } from './busContact.ts';
import type { CallsInFlight } from './callsInFlight.ts';
import { SkipReason } from '../../shared/gen/tock/v1/events_pb.ts';
import { countLapsed, countMissed, countNotMade, countSkip } from './countRun.ts';
import { attemptId, attemptOf, failedExecution, fairShareSkip, fireAt, plannedSkip, requestFor, retryNotMade, skippedExecution } from './dueRunMessages.ts';
import type { ExecutionPublisher } from './executionPublisher.ts';
import type { FairGate } from './fairGate.ts';
import type { HeldRuns } from './heldRuns.ts';
import type { HttpCaller } from './httpCall.ts';
import type { InstantQueue } from './instantQueue.ts';
import type { createStaleRuns } from './staleRuns.ts';

/** A run handed back for want of contact comes back no sooner than this (not in a loop while the bus is away). */
const HANDED_BACK_DELAY_MS = 500;

export type TargetedRun = DueRun & { target: NonNullable<DueRun['target']> };

export interface SettleRunDeps {
  executions: ExecutionPublisher;
  held: HeldRuns;
  instants: InstantQueue;
  stale: ReturnType<typeof createStaleRuns>;
  /** Whether this executor has every cancel notice stored until now (busContact.ts). */
  inContact: BusContact;
  leases: Leases;
  gate: FairGate;
  calls: CallsInFlight;
  caller: HttpCaller;
  clock: Clock;
  log: Logger;
  serverName: string;
  userAgent: string;
  secrets?: Sealer;
  /** How many of one account's runs due together are built ahead of their instant. */
  prepareAhead: number;
}

/**
 * One due run, from its delivery to its ack: wait for its instant, drop it when a job change made
 * it stale, take a slot of the job's `instances` (a lease) and of the account's fair share, call,
 * publish the execution, and only then ack. A run handed back (stopping) is nak'ed for another
 * replica, before its instant or, past a stop's drain limit, during its call (see callsInFlight.ts);
 * a run skipped or failed before its call still gets its execution event.
 */
export function createSettleRun(deps: SettleRunDeps) {
  const { executions, held, instants, stale, inContact, leases, gate, calls, caller, clock, log, serverName, userAgent, secrets, prepareAhead } = deps;

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
    await executions.publish(run, failedExecution(run, serverName, clock.now(), `job secrets: ${error.message}`));
  };

  // One line a second at most (`runs`: how many since the last line): a starved executor lapses
  // the runs of a whole instant together.
  let lapsedLogged = 0;
  let lapsedSince = 0;
  const lapsedRun = (run: DueRun) => {
    countLapsed();
    lapsedSince++;
    if (Date.now() - lapsedLogged < 1000) return;
    log.warn('runs not called: held past their ack wait (this executor was starved), the bus redelivers them', { runs: lapsedSince, runId: attemptId(run) });
    lapsedLogged = Date.now();
    lapsedSince = 0;
  };

  return async function settleRun(msg: BusMessage, run: TargetedRun): Promise<void> {
    const known = executions.calledBefore(run);
    if (known !== undefined) {
      // Called here already; its ack or its event was lost with the bus: finish it, never call twice.
      if (known) await executions.storeAgain(run, known);
      await msg.ack();
      return;
    }
    // The planner's record of runs not made (an account disabled): no call, no slot, no wait.
    if (run.skip !== SkipReason.UNSPECIFIED) {
      await executions.publish(run, plannedSkip(run, serverName, clock.now()));
      countSkip(run.skip, Math.max(1, run.missed));
      await msg.ack();
      return;
    }
    // Keep the message ours while we wait for its instant and while the call runs.
    held.hold(msg);
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
      // Out of touch with the bus, a change to the job may have gone unheard: hand it back, not
      // make it (another replica, or this one back in touch, takes it after its ack wait).
      if (!(await inContact())) return msg.nak(HANDED_BACK_DELAY_MS);
      // Planned ahead, then the job changed (paused, edited, deleted...): the planner re-planned it.
      if (stale.isStale({ jobId: Number(run.target.jobId), plannedAt: Number(run.plannedAt), planSince: Number(run.planSince), occurrenceAt: Number(run.occurrenceAt), manual: run.manual, retry: attemptOf(run) > 1 })) {
        await msg.ack();
        return;
      }
      const limit = run.target.instances;
      const leaseKey = `job-${run.target.jobId}`;
      // The lease outlives the longest possible call (timeout, one connect retry), so a dead executor's slot frees itself.
      if (limit > 0 && !(await leases.acquire(leaseKey, attemptId(run), limit, (run.target.timeout * 2 + 60) * 1000))) {
        if (attemptOf(run) > 1) {
          await executions.publish(run, retryNotMade(run, serverName, clock.now()));
          countNotMade();
        } else {
          await executions.publish(run, skippedExecution(run, serverName, clock.now()));
          countSkip(SkipReason.INSTANCES);
          countMissed(run);
        }
        await msg.ack();
        return;
      }
      try {
        const release = await gate.enter(accountId);
        if (release === 'closed') return msg.nak();
        if (release === 'full') {
          await executions.publish(run, fairShareSkip(run, serverName, clock.now(), gate.load(accountId)));
          countSkip(SkipReason.FAIR_SHARE);
          countMissed(run);
        } else {
          try {
            // A run past its account's share was not built ahead: built now it has a slot.
            spec ??= prepare(run);
            if (spec instanceof EnvelopeError) await secretsFailed(run, spec);
            else if (held.lapsed(msg)) {
              // Starved past its ack wait before its call: the bus may have given the run to
              // another replica, which calls it. Neither call nor ack here: the message is that
              // replica's, or comes back (here or elsewhere) at the end of its ack wait.
              lapsedRun(run);
              return;
            } else {
              const result = await calls.during(msg, caller.call(spec));
              // Cut short at a stop's drain limit: the replica that took the run over records it.
              if (calls.handedBack(msg)) return;
              await executions.finishCall(run, result);
            }
          } finally {
            release();
          }
        }
      } finally {
        // A run handed back keeps its lease: the replica taking it over holds it under the same name.
        if (limit > 0 && !calls.handedBack(msg)) await leases.release(leaseKey, attemptId(run)).catch((error) => log.warn('lease release failed', { error }));
      }
      await msg.ack();
    } finally {
      held.release(msg);
    }
  };
}
