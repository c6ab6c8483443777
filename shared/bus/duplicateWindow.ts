/**
 * Message ids a stream has seen within its duplicate window, expired oldest first. Kept as flat
 * arrays rather than an object per id: a busy stream holds millions of ids in a 15-minute window.
 */
export class DuplicateWindow {
  private readonly seqOf = new Map<string, number>();
  private ids: string[] = [];
  private ats: number[] = [];
  private seqs: number[] = [];
  private head = 0;

  constructor(public windowMs: number) {}

  /** The sequence stored under `id` when it was published within the window before `now`. */
  seen(id: string, now: number): number | undefined {
    this.expire(now);
    return this.seqOf.get(id);
  }

  add(id: string, seq: number, now: number) {
    this.seqOf.set(id, seq);
    this.ids.push(id);
    this.ats.push(now);
    this.seqs.push(seq);
  }

  expire(now: number) {
    const horizon = now - this.windowMs;
    // ids, ats and seqs are parallel arrays: head < ats.length bounds all three.
    while (this.head < this.ats.length && this.ats[this.head]! <= horizon) {
      const id = this.ids[this.head]!;
      // The same id published again after it expired has a newer entry: leave that one.
      if (this.seqOf.get(id) === this.seqs[this.head]) this.seqOf.delete(id);
      // Let go of the id now, not when the arrays are next compacted: until then the expired half
      // of the arrays would keep as many ids alive again as the window holds.
      this.ids[this.head] = '';
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.ats.length) {
      this.ids = this.ids.slice(this.head);
      this.ats = this.ats.slice(this.head);
      this.seqs = this.seqs.slice(this.head);
      this.head = 0;
    }
  }
}
