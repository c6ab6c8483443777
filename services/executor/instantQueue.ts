import type { Clock } from '../../shared/clock.ts';

/**
 * Where runs wait for their instant, and the order they leave in.
 *
 * One timer per instant, not one per run: when it fires, the runs due then leave round-robin
 * across accounts (one of each account per round), so another account's run is among the first
 * to go even when one account has 10,000 due on the same second. They leave in slices, a macrotask
 * apart, so the calls of the first slice are on their sockets before the next slice is handled.
 * A run whose instant has passed (it arrived late) joins the batch that leaves on the next turn
 * of the event loop, with the same round-robin.
 */
export interface InstantQueue {
  /** Resolves true at the run's turn; false when the queue closes first. */
  wait(due: number, accountId: number): Promise<boolean>;
  /** How many of an account's runs wait for this instant now. */
  waiting(due: number, accountId: number): number;
  /** Answers false to every run still waiting, and to every run that comes. */
  close(): void;
}

export interface InstantQueueOptions {
  clock: Clock;
  /** Runs released in the first slice (each next one twice as many, up to 1024). */
  slice?: number;
  /** Runs the next slice (tests pass their own). */
  defer?: (fn: () => void) => void;
}

type Resolve = (onTime: boolean) => void;

interface Batch {
  lines: Map<number, Resolve[]>;
  cancel: () => void;
}

/**
 * Runs per slice: the first slice is small and each next one twice the last, up to the cap. Every
 * call of a slice is written before any answer is read, so big slices keep an instant's calls
 * together (the more calls a slice holds, the less late the last of an instant's crowd is sent);
 * a small first slice lets the first round of every account (another account's single run
 * beside a crowd) reach its socket, even one still connecting, before the crowd's work runs.
 */
const FIRST_SLICE = 128;
const MAX_SLICE = 1024;
/** The key of the batch of runs whose instant has passed. */
const NOW = -1;

export function createInstantQueue(options: InstantQueueOptions): InstantQueue {
  const { clock } = options;
  const firstSlice = options.slice ?? FIRST_SLICE;
  const defer = options.defer ?? setImmediate;
  const batches = new Map<number, Batch>();
  let closed = false;

  const release = (key: number) => {
    const batch = batches.get(key);
    if (!batch) return;
    batches.delete(key);
    leave(roundRobin(batch.lines), 0, firstSlice);
  };

  const leave = (order: Resolve[], from: number, slice: number) => {
    const end = closed ? order.length : Math.min(order.length, from + slice);
    for (let i = from; i < end; i++) order[i]!(!closed);
    if (end < order.length) defer(() => leave(order, end, Math.min(slice * 2, MAX_SLICE)));
  };

  return {
    wait(due, accountId) {
      if (closed) return Promise.resolve(false);
      const key = due > clock.now() ? due : NOW;
      let batch = batches.get(key);
      if (!batch) {
        let cancelled = false;
        const cancel = key === NOW ? () => (cancelled = true) : clock.setTimer(due, () => release(key));
        if (key === NOW) defer(() => cancelled || release(NOW));
        batches.set(key, (batch = { lines: new Map(), cancel }));
      }
      let line = batch.lines.get(accountId);
      if (!line) batch.lines.set(accountId, (line = []));
      const l = line;
      return new Promise<boolean>((resolve) => l.push(resolve));
    },
    waiting(due, accountId) {
      return batches.get(due > clock.now() ? due : NOW)?.lines.get(accountId)?.length ?? 0;
    },
    close() {
      closed = true;
      for (const batch of batches.values()) {
        batch.cancel();
        for (const line of batch.lines.values()) for (const resolve of line) resolve(false);
      }
      batches.clear();
    },
  };
}

/** One of each account per round, accounts in the order they first had a run in the batch. */
export function roundRobin<T>(lines: Map<number, T[]>): T[] {
  const out: T[] = [];
  const queues = [...lines.values()];
  for (let round = 0; queues.length > 0; round++) {
    let kept = 0;
    for (const q of queues) {
      if (round < q.length) {
        out.push(q[round]!);
        queues[kept++] = q;
      }
    }
    queues.length = kept;
  }
  return out;
}
