import type { Watch } from '../../shared/bus/bus.ts';
import type { Logger } from '../../shared/log.ts';

/** How long a run at its instant waits for proof of contact with the bus before it is handed back. */
export const CONTACT_WAIT_MS = 2000;
/**
 * After contact came back, runs wait this long more: a planner cut off by the same outage stores
 * the cancel notices it could not store meanwhile within it. It reconnects up to 1.5 s after
 * this executor (nats.js's reconnect wait and jitter), then tries every 250 ms, each try given up
 * after 1 s (cancelNotices.ts).
 */
export const REGAINED_GRACE_MS = 4000;

/**
 * Whether this executor may fire a run now: it has read every cancel notice stored until now
 * (Watch.current, a round trip to the bus), and is not just back from an outage whose notices may
 * still be on their way. Cut off from NATS (a partition it has not even noticed, NATS restarting)
 * it cannot know that the job did not change: the run is handed back rather than made from what
 * may be an old version of the job. Calls made in one turn of the event loop (the runs of one
 * instant) share one check.
 */
export function createBusContact(cancels: Watch, log: Logger, options: { waitMs?: number; graceMs?: number } = {}) {
  const waitMs = options.waitMs ?? CONTACT_WAIT_MS;
  const graceMs = options.graceMs ?? REGAINED_GRACE_MS;
  let shared: Promise<boolean> | null = null;
  let lost = false;
  const check = () => {
    shared ??= new Promise<boolean>((resolve) =>
      setImmediate(() => {
        shared = null;
        cancels.current(waitMs).then(resolve, () => resolve(false));
      }),
    ).then((ok) => {
      // Once per outage in the log, not once per run.
      if (ok === lost) log[ok ? 'info' : 'warn'](ok ? 'in contact with NATS again: runs are made again' : 'no contact with NATS: runs due now are handed back, a job change may have gone unheard');
      lost = !ok;
      return ok;
    });
    return shared;
  };
  return async function inContact(): Promise<boolean> {
    if (!(await check())) return false;
    const regained = cancels.regainedAt();
    const left = regained === undefined ? 0 : regained + graceMs - Date.now();
    if (left <= 0) return true;
    await new Promise((resolve) => setTimeout(resolve, left));
    return check();
  };
}

export type BusContact = ReturnType<typeof createBusContact>;
