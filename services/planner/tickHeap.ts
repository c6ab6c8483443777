/**
 * The heap of every job's next tick, one per scheduled job, held in typed arrays: 20 bytes an entry
 * where an object heap costs about 130 (an object of seven fields, three of them boxed doubles,
 * and its array slot). At a million jobs that is 20 MB instead of 130.
 *
 * Same contract as TimerHeap: lazy invalidation (a stale entry stays until it reaches the head,
 * where `isCurrent` drops it) and a rebuild without stale entries once they outnumber live ones.
 */
export class TickHeap {
  private at = new Float64Array(1024);
  private job = new Float64Array(1024);
  private version = new Uint32Array(1024);
  private n = 0;
  private stale = 0;

  /** `isCurrent(jobId, version)`: false once the tick no longer stands for the job's plan. */
  constructor(private readonly isCurrent: (jobId: number, version: number) => boolean) {}

  get size() {
    return this.n;
  }

  push(at: number, jobId: number, version: number) {
    if (this.n === this.at.length) this.resize(this.n * 2);
    this.siftUp(this.n++, at, jobId, version);
  }

  /** The head's instant after dropping stale heads, or undefined when empty. */
  peekAt(): number | undefined {
    while (this.n > 0 && !this.isCurrent(this.job[0]!, this.version[0]!)) {
      this.removeHead();
      if (this.stale > 0) this.stale--;
    }
    return this.n > 0 ? this.at[0] : undefined;
  }

  /** Removes the head (call peekAt first) and returns what `make` builds of it: one object a fired tick, no more. */
  pop<T>(make: (at: number, jobId: number, version: number) => T): T {
    const head = make(this.at[0]!, this.job[0]!, this.version[0]!);
    this.removeHead();
    return head;
  }

  invalidated(count = 1) {
    this.stale += count;
    if (this.stale > 1024 && this.stale > this.n / 2) this.compact();
  }

  /** Drops every stale entry now, and the room they held. */
  compact() {
    let kept = 0;
    for (let i = 0; i < this.n; i++) {
      if (!this.isCurrent(this.job[i]!, this.version[i]!)) continue;
      this.at[kept] = this.at[i]!;
      this.job[kept] = this.job[i]!;
      this.version[kept] = this.version[i]!;
      kept++;
    }
    this.n = kept;
    this.stale = 0;
    if (this.at.length > 2048 && kept < this.at.length / 4) this.resize(Math.max(1024, kept * 2));
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i, this.at[i]!, this.job[i]!, this.version[i]!);
  }

  /** New arrays of `size` entries (larger when full, smaller after a compaction freed most), the held ones copied. */
  private resize(size: number) {
    const copy = <A extends Float64Array | Uint32Array>(a: A, make: (n: number) => A) => {
      const b = make(size);
      b.set(a.subarray(0, this.n));
      return b;
    };
    this.at = copy(this.at, (k) => new Float64Array(k));
    this.job = copy(this.job, (k) => new Float64Array(k));
    this.version = copy(this.version, (k) => new Uint32Array(k));
  }

  private siftUp(i: number, at: number, jobId: number, version: number) {
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (this.at[up]! <= at) break;
      this.move(up, i);
      i = up;
    }
    this.set(i, at, jobId, version);
  }

  private removeHead() {
    const last = --this.n;
    if (last > 0) this.siftDown(0, this.at[last]!, this.job[last]!, this.version[last]!);
  }

  private siftDown(i: number, at: number, jobId: number, version: number) {
    const n = this.n;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.at[r]! < this.at[l]! ? r : l;
      if (this.at[c]! >= at) break;
      this.move(c, i);
      i = c;
    }
    this.set(i, at, jobId, version);
  }

  private move(from: number, to: number) {
    this.at[to] = this.at[from]!;
    this.job[to] = this.job[from]!;
    this.version[to] = this.version[from]!;
  }

  private set(i: number, at: number, jobId: number, version: number) {
    this.at[i] = at;
    this.job[i] = jobId;
    this.version[i] = version;
  }
}
