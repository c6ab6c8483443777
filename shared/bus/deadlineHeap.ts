/** One redelivery deadline of a pending delivery `p`. */
export type Deadline<P> = { at: number; p: P };

/** Min-heap of redelivery deadlines. Entries are not removed early: they go stale (see `valid`). */
export class DeadlineHeap<P> {
  items: Deadline<P>[] = [];
  // The `!` below index within [0, length): 0 < up < i < length on the way up, and m, c < length
  // on the way down (checked). This is the bus's hot path: no guards beyond those.
  push(item: Deadline<P>) {
    const a = this.items;
    for (let i = a.push(item) - 1, up = (i - 1) >> 1; i > 0 && a[up]!.at > a[i]!.at; i = up, up = (i - 1) >> 1) {
      [a[up], a[i]] = [a[i]!, a[up]!];
    }
  }
  /** The earliest deadline, removed; undefined when the heap is empty. */
  pop(): Deadline<P> | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (last === undefined || a.length === 0) return top;
    a[0] = last;
    for (let i = 0, m = 0; ; i = m) {
      for (const c of [2 * i + 1, 2 * i + 2]) if (c < a.length && a[c]!.at < a[m]!.at) m = c;
      if (m === i) return top;
      [a[m], a[i]] = [a[i]!, a[m]!];
    }
  }
  retain(keep: (item: Deadline<P>) => boolean) {
    const kept = this.items.filter(keep);
    this.items = [];
    for (const item of kept) this.push(item);
  }
}
