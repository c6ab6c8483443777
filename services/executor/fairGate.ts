/**
 * Each account's share of one executor's calls.
 *
 * An account may have `perAccount` calls in flight here; its further runs wait in its own queue
 * (released in order as its calls end) while the other accounts go on. An account whose queue is
 * already `maxWaiting` long (its targets hang, or it has more runs than its share can serve) has
 * its further runs skipped instead of held: held runs count against the bus's limit of unacked
 * messages, which every account shares. The order in which accounts reach the gate is the
 * instant queue's (instantQueue.ts): round-robin across accounts.
 */
export interface FairGate {
  /**
   * A release function at once when the account has a free slot, or once one of its calls ends;
   * 'full' when its queue is too long (the run is skipped); 'closed' when the executor stops (the
   * run goes back to the bus).
   */
  enter(accountId: number): Promise<Release | 'full' | 'closed'>;
  /** A release function when the account has a free slot now, else null (nothing waits): for a test call. */
  tryEnter(accountId: number): Release | null;
  /** Answers 'closed' to every run still waiting, and to every run that comes. */
  close(): void;
  /** Calls in flight and runs waiting, for one account (metrics, tests). */
  load(accountId: number): { inFlight: number; waiting: number };
}

export type Release = () => void;

export interface FairGateOptions {
  /** Calls in flight per account; 0: no limit. */
  perAccount: number;
  /** Runs that may wait for a slot per account before further ones are refused. */
  maxWaiting: number;
}

interface AccountLine {
  inFlight: number;
  waiting: ((answer: Release | 'closed') => void)[];
}

export function createFairGate(options: FairGateOptions): FairGate {
  const { perAccount, maxWaiting } = options;
  const lines = new Map<number, AccountLine>();
  let closed = false;

  const full = (l: AccountLine) => perAccount > 0 && l.inFlight >= perAccount;

  const releaseOf = (accountId: number, l: AccountLine): Release => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = l.waiting.shift();
      // The slot passes straight to the account's next run; the count stays.
      if (next) return next(releaseOf(accountId, l));
      l.inFlight--;
      if (l.inFlight === 0) lines.delete(accountId);
    };
  };

  return {
    enter(accountId) {
      if (closed) return Promise.resolve('closed' as const);
      let l = lines.get(accountId);
      if (!l) lines.set(accountId, (l = { inFlight: 0, waiting: [] }));
      if (!full(l)) {
        l.inFlight++;
        return Promise.resolve(releaseOf(accountId, l));
      }
      if (l.waiting.length >= maxWaiting) return Promise.resolve('full' as const);
      const line = l;
      return new Promise<Release | 'closed'>((resolve) => line.waiting.push(resolve));
    },
    tryEnter(accountId) {
      if (closed) return null;
      const l = lines.get(accountId) ?? { inFlight: 0, waiting: [] };
      if (full(l)) return null;
      lines.set(accountId, l);
      l.inFlight++;
      return releaseOf(accountId, l);
    },
    close() {
      closed = true;
      for (const l of lines.values()) for (const resolve of l.waiting.splice(0)) resolve('closed');
    },
    load(accountId) {
      const l = lines.get(accountId);
      return { inFlight: l?.inFlight ?? 0, waiting: l?.waiting.length ?? 0 };
    },
  };
}
