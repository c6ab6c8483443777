import type { BusMessage } from '../../shared/bus/bus.ts';

/**
 * The due runs this executor holds (waiting for their instant, or being called): each is told to
 * the bus as still being worked on before its ack wait ends, so it is not redelivered to another
 * replica meanwhile. One timer for every held run, not one each: thousands are held at the top of
 * a minute.
 */
export function createHeldRuns(ackWaitMs: number) {
  const held = new Map<BusMessage, number>();
  const heartbeatMs = ackWaitMs / 3;
  const heartbeat = setInterval(() => {
    const now = Date.now();
    for (const [m, since] of held) {
      if (now - since < heartbeatMs) continue;
      m.working();
      held.set(m, now);
    }
  }, heartbeatMs / 2);
  heartbeat.unref();
  return {
    hold: (msg: BusMessage) => void held.set(msg, Date.now()),
    release: (msg: BusMessage) => void held.delete(msg),
    stop: () => clearInterval(heartbeat),
  };
}

export type HeldRuns = ReturnType<typeof createHeldRuns>;
