/** What the heap orders on: the instant (ms) the entry is due. */
export interface Timed {
  at: number;
}

/**
 * A binary min-heap of timed entries with lazy invalidation: an entry made obsolete (its job was
 * re-planned, edited, deleted) is not searched for and removed, which would cost O(n); it stays
 * until it reaches the head, where `isCurrent` says it is stale and it is dropped. When stale
 * entries outnumber live ones the heap is rebuilt without them, so memory stays bounded by the
 * number of live entries.
 */
export class TimerHeap<T extends Timed> {
  private items: T[] = [];
  private stale = 0;

  /** `isCurrent(entry)`: false once the entry no longer stands for anything (e.g. its job version moved on). */
  constructor(private readonly isCurrent: (entry: T) => boolean) {}

  /** Entries held, stale ones included. */
  get size() {
    return this.items.length;
  }

  push(entry: T) {
    const a = this.items;
    let i = a.push(entry) - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (a[up]!.at <= entry.at) break;
      a[i] = a[up]!;
      i = up;
    }
    a[i] = entry;
  }

  /** The earliest current entry, or undefined; stale heads are dropped on the way. */
  peek(): T | undefined {
    while (this.items.length > 0 && !this.isCurrent(this.items[0]!)) {
      this.removeHead();
      if (this.stale > 0) this.stale--;
    }
    return this.items[0];
  }

  /** Removes and returns the earliest current entry due at or before `now`, or undefined. */
  popDue(now: number): T | undefined {
    const head = this.peek();
    if (!head || head.at > now) return undefined;
    this.removeHead();
    return head;
  }

  /** Tells the heap that one held entry just became stale; compacts when stale entries dominate. */
  invalidated(count = 1) {
    this.stale += count;
    if (this.stale > 1024 && this.stale > this.items.length / 2) this.compact();
  }

  /** Drops every stale entry now. */
  compact() {
    this.items = this.items.filter(this.isCurrent);
    this.stale = 0;
    this.heapify();
  }

  private removeHead() {
    const a = this.items;
    const last = a.pop()!;
    if (a.length === 0) return;
    let i = 0;
    const n = a.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && a[r]!.at < a[l]!.at ? r : l;
      if (a[c]!.at >= last.at) break;
      a[i] = a[c]!;
      i = c;
    }
    a[i] = last;
  }

  private heapify() {
    const a = this.items;
    for (let start = (a.length >> 1) - 1; start >= 0; start--) {
      const item = a[start]!;
      let i = start;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const r = l + 1;
        const c = r < a.length && a[r]!.at < a[l]!.at ? r : l;
        if (a[c]!.at >= item.at) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = item;
    }
  }
}
