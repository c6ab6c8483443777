import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { encodeCancel, runCancelSubject } from '../../shared/subjects/planner.ts';
import type { RunCancel } from '../../shared/topology.ts';

/** A notice that could not be stored is tried again this often (an outage of NATS, a lost link). */
const RETRY_MS = 250;
/**
 * Each attempt gives up this soon (NATS's default is 5 s): once NATS is back, a notice is stored
 * within about a second, inside the grace an executor gives the planners after it regains contact.
 */
const ATTEMPT_MS = 1000;

/**
 * The planner's cancel notices, stored in the CANCELS stream (shared/topology.ts), where every
 * executor reads them, including one cut off from NATS when the job changed, once it is back. A
 * notice that cannot be stored now is tried again until it is (or the planner stops): until then
 * an executor may fire a run the change made stale, so it is not given up.
 */
export function createCancelNotices(options: { bus: Bus; clock: Clock; log: Logger }) {
  const { bus, clock, log } = options;
  const retrying = new Set<ReturnType<typeof setTimeout>>();
  let stopped = false;

  const send = (notice: RunCancel, attempt: number) => {
    bus.publish(runCancelSubject(notice.jobId), encodeCancel(notice), { timeoutMs: ATTEMPT_MS }).then(
      () => attempt > 0 && log.info('cancel notice stored after retrying', { jobId: notice.jobId, attempts: attempt + 1 }),
      (error: unknown) => {
        if (stopped) return;
        if (attempt === 0) log.warn('cancel notice not stored; retrying', { jobId: notice.jobId, retryInMs: RETRY_MS, error });
        const timer = setTimeout(() => {
          retrying.delete(timer);
          if (!stopped) send(notice, attempt + 1);
        }, RETRY_MS);
        retrying.add(timer);
      },
    );
  };

  return {
    /**
     * Runs on the bus were planned from the job as it was: the notice makes executors drop the
     * first attempts of occurrences after `from` planned before the change at `since` (the planner
     * publishes those again from the new state, or not at all), and every retry planned before now.
     * Occurrences at or before `from` were due before the change (or out already) and keep their run.
     */
    cancel(jobId: number, since: number, from: number) {
      send({ jobId, before: clock.now(), since, from }, 0);
    },
    stop() {
      stopped = true;
      for (const timer of retrying) clearTimeout(timer);
      retrying.clear();
    },
  };
}
