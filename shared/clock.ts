/** Time source. Everything that reads "now" or waits takes a Clock so tests never sleep. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls fn once at (or after) the absolute time `at` (ms). Returns a cancel function. */
  setTimer(at: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(at, fn) {
    // setTimeout caps at ~24.8 days; re-arm for far-away instants.
    const MAX = 2 ** 31 - 1;
    let handle: NodeJS.Timeout;
    const arm = () => {
      const wait = at - Date.now();
      handle = setTimeout(wait > MAX ? arm : fn, Math.max(0, Math.min(wait, MAX)));
    };
    arm();
    return () => clearTimeout(handle);
  },
};

/** A clock moved only by the test: timers fire, in time order, when `advance` passes them. */
export class FakeClock implements Clock {
  private timers: { at: number; fn: () => void; seq: number }[] = [];
  private seq = 0;
  constructor(private current: number) {}
  now() {
    return this.current;
  }
  setTimer(at: number, fn: () => void) {
    const timer = { at, fn, seq: this.seq++ };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }
  /** Moves time forward by ms, firing due timers in order (each sees now() = its own time). */
  async advance(ms: number) {
    const target = this.current + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
      // Let promise chains started by the timer settle before the next one fires.
      await new Promise((r) => setImmediate(r));
    }
    this.current = target;
  }
  set(ms: number) {
    this.current = ms;
  }
}
