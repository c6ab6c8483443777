/**
 * Fair share of one executor between accounts.
 *
 * Runs that reach their instant together enter the gate and are admitted round-robin across
 * accounts, so one account's 10,000 runs due on a second do not stand in front of another
 * account's single run. An account may have `perAccount` calls in flight here; the rest of its
 * runs wait in its own queue while the other accounts go on. An account whose queue is already
 * `maxWaiting` long (its targets hang, or it has more runs than its share can serve) has its
 * further runs skipped instead of held: held runs count against the bus's limit of unacked
 * messages, which every account shares.
 */
export interface FairGate {
  /**
   * A release function once the account may start a call; 'full' when its queue is too long
   * (the run is skipped); 'closed' when the executor stops (the run goes back to the bus).
   */
  enter(accountId: number): Promise<Release | 'full' | 'closed'>;
  /** Answers 'closed' to every run still waiting, and to every run that comes. */
  close(): void;
  /** Calls in flight and runs waiting, for one account (metrics, tests). */
  load(accountId: number): { inFlight: number; waiting: number };
}

export type Release = () => void;

export interface FairGateOptions {
  /** Calls in flight per account; 0: no limit (runs are still admitted round-robin). */
  perAccount: number;
  /** Runs that may wait for a slot per account before further ones are refused. */
  maxWaiting: number;
  /** Runs the admission after the current turn of the event loop (tests pass their own). */
  defer?: (fn: () => void) => void;
}

interface AccountLine {
  inFlight: number;
  waiting: ((answer: Release | 'closed') => void)[];
}

export function createFairGate(options: FairGateOptions): FairGate {
  const { perAccount, maxWaiting } = options;
  const defer = options.defer ?? setImmediate;
  const lines = new Map<number, AccountLine>();
  // Accounts with waiting runs, in the order their turn comes.
  let turns: number[] = [];
  let scheduled = false;
  let closed = false;

  const line = (accountId: number) => {
    let l = lines.get(accountId);
    if (!l) lines.set(accountId, (l = { inFlight: 0, waiting: [] }));
    return l;
  };
  const full = (l: AccountLine) => perAccount > 0 && l.inFlight >= perAccount;
  const forget = (accountId: number, l: AccountLine) => {
    if (l.inFlight === 0 && l.waiting.length === 0) lines.delete(accountId);
  };

  const releaseOf = (accountId: number, l: AccountLine): Release => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      l.inFlight--;
      if (l.waiting.length > 0) schedule();
      else forget(accountId, l);
    };
  };

  // One account's run per turn, round after round, until nobody who waits may go.
  const admit = () => {
    scheduled = false;
    let admitted = true;
    while (admitted) {
      admitted = false;
      const next: number[] = [];
      for (const accountId of turns) {
        const l = lines.get(accountId);
        if (!l || l.waiting.length === 0) continue;
        if (!full(l)) {
          l.inFlight++;
          l.waiting.shift()!(releaseOf(accountId, l));
          admitted = true;
        }
        if (l.waiting.length > 0) next.push(accountId);
      }
      turns = next;
    }
  };

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    defer(admit);
  }

  return {
    enter(accountId) {
      if (closed) return Promise.resolve('closed' as const);
      const l = line(accountId);
      if (l.waiting.length >= maxWaiting && full(l)) return Promise.resolve('full' as const);
      return new Promise<Release | 'closed'>((resolve) => {
        if (l.waiting.length === 0) turns.push(accountId);
        l.waiting.push(resolve);
        schedule();
      });
    },
    close() {
      closed = true;
      for (const [accountId, l] of lines) {
        for (const resolve of l.waiting.splice(0)) resolve('closed');
        forget(accountId, l);
      }
      turns = [];
    },
    load(accountId) {
      const l = lines.get(accountId);
      return { inFlight: l?.inFlight ?? 0, waiting: l?.waiting.length ?? 0 };
    },
  };
}
