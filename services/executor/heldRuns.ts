import type { BusMessage } from '../../shared/bus/bus.ts';

/**
 * The due runs this executor holds (queued behind other arrivals, waiting for their instant, or
 * being called): each is told to the bus as still being worked on before its ack wait ends, so it
 * is not redelivered to another replica meanwhile. One timer for every held run, not one each:
 * thousands are held at the top of a minute.
 *
 * A heartbeat needs the event loop. An executor starved past the ack wait (a loaded machine, a
 * long pause) sends none, the bus hands its runs to another replica, which calls them, and a
 * heartbeat sent after the pause cannot undo that. So each held run remembers the bus's last sign
 * of it (its arrival, then each heartbeat) and is marked lapsed once a gap reaches LAPSE_SHARE of
 * the ack wait: this executor no longer calls it (lapsed()), and leaves its message alone, for
 * the replica that has it now or for its redelivery.
 */
export function createHeldRuns(ackWaitMs: number, options: { now?: () => number; timers?: boolean } = {}) {
  const now = options.now ?? Date.now;
  const held = new Map<BusMessage, number>();
  const lapsedRuns = new WeakSet<BusMessage>();
  const heartbeatMs = ackWaitMs / 3;
  // Short of the whole ack wait: the bus started it before the message reached this process, and
  // the other replica's delivery comes as soon as it ends.
  const lapseMs = ackWaitMs * LAPSE_SHARE;
  const lapse = (msg: BusMessage) => {
    lapsedRuns.add(msg);
    // No more heartbeats: the bus hands it on at the end of its ack wait, not later.
    held.delete(msg);
  };
  // The last turn of the event loop known (its tick), and, after a pause, the turn before it:
  // a message read now may have waited in the socket since then, its ack wait running.
  let lastTick = now();
  let pausedFrom: number | undefined;
  let steadyTicks = 0;
  const beat = () => {
    const t = now();
    if (t - lastTick > PAUSE_MS) {
      pausedFrom ??= lastTick;
      steadyTicks = 0;
    } else if (pausedFrom !== undefined && ++steadyTicks >= 2) pausedFrom = undefined;
    lastTick = t;
    for (const [m, since] of held) {
      if (t - since >= lapseMs) lapse(m);
      else if (t - since >= heartbeatMs) {
        m.working();
        held.set(m, t);
      }
    }
  };
  // Checked often, so that a run's last heartbeat is never much older than heartbeatMs: the gap
  // left before lapseMs is what a starved event loop may lose without losing its runs.
  const heartbeat = options.timers === false ? undefined : setInterval(beat, TICK_MS);
  heartbeat?.unref();
  return {
    /**
     * From its arrival as the bus may have sent it: no later than the last turn of the event loop
     * before the one that read it (before a pause, when one came between). A run held already
     * keeps its time.
     */
    hold(msg: BusMessage) {
      if (!held.has(msg) && !lapsedRuns.has(msg)) held.set(msg, Math.min(now(), pausedFrom ?? lastTick));
    },
    release: (msg: BusMessage) => void held.delete(msg),
    /**
     * True when the bus may have given the run to another replica: its call is that replica's
     * now. Checked right before calling, as the heartbeat may not have run since the pause.
     */
    lapsed(msg: BusMessage): boolean {
      const since = held.get(msg);
      if (since !== undefined && now() - since >= lapseMs) lapse(msg);
      return lapsedRuns.has(msg);
    },
    /** One heartbeat round, as the timer runs it. */
    beat,
    stop: () => heartbeat && clearInterval(heartbeat),
  };
}

/**
 * The part of the ack wait after which a run not heard of by the bus counts as lapsed. The rest
 * covers what this process cannot see: how long its message, or its last heartbeat, took between
 * the bus and this event loop.
 */
export const LAPSE_SHARE = 0.9;
const TICK_MS = 250;
/** A gap between ticks this long is a pause of the event loop (starved, or the process stopped). */
const PAUSE_MS = 3 * TICK_MS;

export type HeldRuns = ReturnType<typeof createHeldRuns>;
