import type { Clock } from '../../shared/clock.ts';
import type { Entry } from './firing.ts';

/** What the timer takes entries from: the planner's EntryHeap. */
export interface DueHeap {
  headAt(): number | undefined;
  popDue(now: number): Entry | undefined;
}

/** Entries fired per macrotask when many fall due at once. */
const DRAIN_CHUNK = 256;

/**
 * The planner's wake-up: one clock timer on the heap's head (no polling tick), and the drain of
 * everything due when it fires. Does nothing until `live` is set, and nothing once it is cleared.
 */
export class DueTimer {
  live = false;
  private wake: { at: number; cancel: () => void } | null = null;
  private drainQueued = false;

  /** `fire(entry, now)`: fires one due entry taken off the heap. */
  constructor(
    private readonly heap: DueHeap,
    private readonly clock: Clock,
    private readonly fire: (e: Entry, now: number) => void,
  ) {}

  /** Not live any more, and the timer cancelled. */
  stop() {
    this.live = false;
    this.wake?.cancel();
    this.wake = null;
  }

  /** Whether a drain is queued or the heap's head is due: something is left to fire. */
  pending() {
    return this.drainQueued || this.hasDue();
  }

  private hasDue() {
    const head = this.heap.headAt();
    return head !== undefined && head <= this.clock.now();
  }

  /** One timer, on the heap's head. A head already due is drained in a microtask (no clock advance needed). */
  arm() {
    if (!this.live) return;
    const at = this.heap.headAt();
    if (at === undefined) return;
    const { clock } = this;
    if (at <= clock.now()) {
      if (!this.drainQueued) {
        this.drainQueued = true;
        queueMicrotask(() => {
          this.drainQueued = false;
          this.drain();
        });
      }
      return;
    }
    if (this.wake && this.wake.at <= at) return;
    this.wake?.cancel();
    this.wake = {
      at,
      cancel: clock.setTimer(at, () => {
        if (this.wake?.at === at) this.wake = null;
        this.drain();
      }),
    };
  }

  /**
   * Fires everything due. At the top of a minute that is thousands of entries; they are taken in
   * chunks with a macrotask break between, so the first ones are on the bus (and with the
   * executors) while the rest are still being taken off the heap.
   */
  private drain() {
    if (!this.live) return;
    // Reading the clock again also covers a timer that fires a little early.
    const now = this.clock.now();
    let n = 0;
    for (let e = this.heap.popDue(now); e; e = n < DRAIN_CHUNK ? this.heap.popDue(now) : undefined) {
      this.fire(e, now);
      n++;
    }
    if (n < DRAIN_CHUNK) return this.arm();
    this.drainQueued = true;
    setImmediate(() => {
      this.drainQueued = false;
      this.drain();
    });
  }
}
