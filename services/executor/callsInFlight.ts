import type { BusMessage } from '../../shared/bus/bus.ts';

/**
 * The calls this executor has sent and not yet finished, each by its due run's message. A stop
 * that reaches its drain limit hands them back: each message goes back to the bus at once (another
 * replica takes the run over and makes the call again) and is marked, so that its own call, cut
 * short, publishes no execution, takes no retry, releases no lease and acks nothing. The run's one
 * record is then the other replica's.
 */
export function createCallsInFlight() {
  const calls = new Set<BusMessage>();
  const handedBack = new WeakSet<BusMessage>();
  return {
    /** `call` (just sent) is the call of `msg`'s run until it settles. */
    async during<T>(msg: BusMessage, call: Promise<T>): Promise<T> {
      calls.add(msg);
      try {
        return await call;
      } finally {
        calls.delete(msg);
      }
    },
    /** The run's call was cut short by a stop and its message given back: leave the run alone. */
    handedBack: (msg: BusMessage) => handedBack.has(msg),
    /** Gives back the message of every call still in flight; returns how many. */
    handBack(): number {
      const count = calls.size;
      for (const msg of calls) {
        handedBack.add(msg);
        msg.nak();
      }
      calls.clear();
      return count;
    },
    get size() {
      return calls.size;
    },
  };
}

export type CallsInFlight = ReturnType<typeof createCallsInFlight>;
