import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Bus, BusMessage, Consumer } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { DueRunSchema, ExecutionOutcome, ExecutionSchema, type DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import type { Leases } from '../../shared/leases/leases.ts';
import type { Logger } from '../../shared/log.ts';
import { runMetrics } from '../../shared/metrics.ts';
import { CONSUMERS, decodeCancel, executionSubject, RUN_CANCEL_SUBJECTS } from '../../shared/topology.ts';
import { executionOf, outcomeName, requestFor, skippedExecution } from './executeRun.ts';
import { createFairGate } from './fairGate.ts';
import type { HttpCaller, HttpResult } from './httpCall.ts';

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
}

/** How many runs of one account may wait for a call slot, per slot: more are skipped, not held. */
const WAITING_PER_SLOT = 10;
/** Without a per-account limit, how many runs of one account may wait before the rest are skipped. */
const WAITING_UNLIMITED = 50_000;

/**
 * Consumes due runs (competing with every other replica), fires each at its instant, enforces
 * `instances` through shared leases, publishes the execution event (message id = run id, so a
 * redelivered run's event is stored once), and only then acks the due run.
 */
export async function startExecutor(options: ExecutorOptions): Promise<Consumer> {
  const { bus, leases, caller, clock, log, serverName, userAgent, accountConcurrency } = options;
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
  // Runs waiting for their instant; stop() releases them (false) instead of waiting the lead out.
  const waiting = new Set<(onTime: boolean) => void>();
  const waitUntil = (due: number) =>
    new Promise<boolean>((resolve) => {
      const cancel = clock.setTimer(due, () => {
        waiting.delete(release);
        resolve(true);
      });
      const release = (onTime: boolean) => {
        cancel();
        resolve(onTime);
      };
      waiting.add(release);
    });
  const cancels = await bus.subscribe(RUN_CANCEL_SUBJECTS, (_subject, data) => {
    const notice = decodeCancel(data);
    if (notice) stale.cancel(notice.jobId, notice.before);
  });

  const publish = async (run: DueRun, execution: ReturnType<typeof executionOf>) => {
    const message = create(ExecutionSchema, execution);
    const subject = executionSubject(Number(run.target!.accountId), Number(run.target!.jobId), outcomeName(message.outcome));
    await bus.publish(subject, toBinary(ExecutionSchema, message), { msgId: run.runId });
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
    // Keep the message ours while we wait for its instant and while the call runs.
    held.set(msg, Date.now());
    try {
      // Built while the run waits for its instant (it depends on the scheduled time only), so the
      // top of a second spends its time on sending.
      const spec = requestFor(run, userAgent);
      const due = Number(run.scheduledAt);
      if (due > clock.now()) {
        // Its connection is opened while it waits, so the instant is spent sending.
        const went = caller.expect(spec.url, due);
        const onTime = await waitUntil(due);
        went();
        // Stopping before its instant: hand it back now for another replica (or the next start).
        if (!onTime) return msg.nak();
      }
      // Planned ahead, then the job changed (paused, edited, deleted...): the planner re-planned it.
      if (!run.manual && stale.isStale(Number(run.target.jobId), Number(run.plannedAt))) {
        await msg.ack();
        return;
      }
      const limit = run.target.instances;
      const leaseKey = `job-${run.target.jobId}`;
      // The lease outlives the longest possible call (timeout, one connect retry), so a dead executor's slot frees itself.
      if (limit > 0 && !(await leases.acquire(leaseKey, run.runId, limit, (run.target.timeout * 2 + 60) * 1000))) {
        await publish(run, skippedExecution(run, serverName, clock.now()));
        runMetrics.executions.skipped.inc();
        await msg.ack();
        return;
      }
      try {
        const accountId = Number(run.target.accountId);
        const release = await gate.enter(accountId);
        if (release === 'closed') return msg.nak();
        if (release === 'full') {
          const { inFlight, waiting } = gate.load(accountId);
          const why = `skipped: this account already has ${inFlight} calls in progress and ${waiting} runs waiting on this executor (its fair share)`;
          await publish(run, skippedExecution(run, serverName, clock.now(), why));
          runMetrics.executions.skipped.inc();
        } else {
          try {
            const result = await caller.call(spec);
            const execution = executionOf(run, result, serverName);
            await publish(run, execution);
            recordRun(execution.outcome === ExecutionOutcome.SUCCEEDED, Number(execution.lateByMs), result);
          } finally {
            release();
          }
        }
      } finally {
        if (limit > 0) await leases.release(leaseKey, run.runId).catch((error) => log.warn('lease release failed', { error }));
      }
      await msg.ack();
    } finally {
      held.delete(msg);
    }
  };

  const consumer = await bus.consume(CONSUMERS.executors, async (msg) => {
    try {
      await handle(msg);
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
      for (const release of waiting) release(false);
      waiting.clear();
      await stopping;
    },
  };
}

/** Counted once the execution is published, so a run redelivered after a bus failure counts once. */
function recordRun(succeeded: boolean, lateByMs: number, result: HttpResult) {
  if (succeeded) {
    runMetrics.executions.succeeded.inc();
    runMetrics.targetDuration.succeeded.observe(result.executionTime);
  } else {
    runMetrics.executions.failed.inc();
    runMetrics.targetDuration.failed.observe(result.executionTime);
  }
  runMetrics.lateness.observe(lateByMs / 1000);
}

/** Cancel notices per job, forgotten after ten minutes (far longer than any planning lead). */
function createStaleRuns() {
  const before = new Map<number, number>();
  return {
    cancel(jobId: number, at: number) {
      before.set(jobId, Math.max(at, before.get(jobId) ?? 0));
      if (before.size > 100_000) {
        const horizon = Date.now() - 10 * 60_000;
        for (const [id, t] of before) if (t < horizon) before.delete(id);
      }
    },
    isStale: (jobId: number, plannedAt: number) => plannedAt > 0 && plannedAt < (before.get(jobId) ?? 0),
  };
}
