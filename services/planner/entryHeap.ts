import { TICK, type Entry } from './firing.ts';
import { TickHeap } from './tickHeap.ts';
import { TimerHeap } from './timerHeap.ts';

/**
 * The planner's timers: every scheduled job's next tick in a typed-array heap (one per job, so
 * a million of them), and the few other entries (delayed runs, queued cron_runs) in an object
 * heap. Taken off together, earliest first. A tick is stored as (fire instant, job, version): its
 * due instant and occurrence are the fire instant plus the lead, which is the planner's constant.
 */
export class EntryHeap {
  private readonly ticks: TickHeap;
  private readonly others: TimerHeap<Entry>;

  /** `tickCurrent`: whether the job's plan is still at `version`; `isCurrent`: the same for other entries. */
  constructor(
    tickCurrent: (jobId: number, version: number) => boolean,
    isCurrent: (e: Entry) => boolean,
    private readonly leadMs: number,
  ) {
    this.ticks = new TickHeap(tickCurrent);
    this.others = new TimerHeap(isCurrent);
  }

  private readonly tickEntry = (at: number, jobId: number, version: number): Entry => {
    const due = at + this.leadMs;
    return { at, due, jobId, version, kind: TICK, occurrence: due, runId: null };
  };

  get size() {
    return this.ticks.size + this.others.size;
  }

  push(e: Entry) {
    if (e.kind === TICK && e.due === e.occurrence && e.at === e.due - this.leadMs) this.ticks.push(e.at, e.jobId, e.version);
    else this.others.push(e);
  }

  /** When the earliest current entry fires, or undefined when none is held. */
  headAt(): number | undefined {
    const t = this.ticks.peekAt();
    const o = this.others.peek()?.at;
    return t === undefined ? o : o === undefined ? t : Math.min(t, o);
  }

  /** Removes and returns the earliest current entry firing at or before `now`, or undefined. */
  popDue(now: number): Entry | undefined {
    const t = this.ticks.peekAt();
    const o = this.others.peek();
    if (t !== undefined && t <= now && (o === undefined || t <= o.at)) {
      return this.ticks.pop(this.tickEntry);
    }
    return this.others.popDue(now);
  }

  /**
   * One held entry became stale. Re-plans and deletes make ticks stale; another entry's job
   * deleted is dropped when it reaches the head (they are few, and each is due soon).
   */
  invalidated() {
    this.ticks.invalidated();
  }
}
