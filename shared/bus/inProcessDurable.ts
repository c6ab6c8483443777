import type { BusMessage, ConsumerOptions, MessageHandler, StreamConfig } from './bus.ts';
import type { Clock } from '../clock.ts';

/**
 * The in-process bus's stream state and durable consumers: subject matching, and per durable the
 * cursor, pending deliveries, redelivery queue and ack-wait/nak-delay deadlines.
 */

/** NATS's default for pull consumers; both adapters use it when maxAckPending is absent. */
const DEFAULT_MAX_ACK_PENDING = 1000;
/** Deliveries in a row before dispatch yields to the event loop, so I/O is not starved. */
const BURST = 2000;

export type Tokens = string[];
export type Headers = Record<string, string>;
export const tokens = (subject: string): Tokens => subject.split('.');

export function matches(pattern: Tokens, subject: Tokens): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '>') return subject.length > i;
    if (i >= subject.length || (pattern[i] !== '*' && pattern[i] !== subject[i])) return false;
  }
  return pattern.length === subject.length;
}

/** True when some subject matches both patterns. */
export function overlaps(a: Tokens, b: Tokens): boolean {
  for (let i = 0; i < a.length && i < b.length; i++) {
    if (a[i] === '>' || b[i] === '>') return true;
    if (a[i] !== '*' && b[i] !== '*' && a[i] !== b[i]) return false;
  }
  return a.length === b.length;
}

export type Stored = { seq: number; subject: string; tokens: Tokens; data: Uint8Array; headers: Headers; time: number };

export interface StreamState {
  config: StreamConfig;
  patterns: Tokens[];
  msgs: Map<number, Stored>; // insertion order is sequence order
  lastSeq: number;
  /** Every sequence below this one is gone. Map iteration from the front would step over every
   * deleted entry still in the table, so the oldest message is found by sequence instead. */
  firstSeq: number;
  ids: Map<string, { seq: number; at: number }>;
  /** Message ids in time order, from `idsHead` on: what the duplicate window expires first. */
  idOrder: { id: string; at: number }[];
  idsHead: number;
  durables: Map<string, Durable>;
}

/** A delivered, not yet acked message of one durable. */
interface Pending {
  seq: number;
  count: number;
  /** Due for redelivery then (ack wait or nak delay); Infinity once queued for redelivery. */
  deadline: number;
  /** Bumped per delivery: nak/working from an earlier delivery must not touch the current one. */
  gen: number;
}

type Deadline = { at: number; p: Pending };
export type Replica = { handler: MessageHandler; inFlight: Set<Promise<void>> };

/** Min-heap of redelivery deadlines. Entries are not removed early: they go stale (see `valid`). */
class DeadlineHeap {
  items: Deadline[] = [];
  push(item: Deadline) {
    const a = this.items;
    for (let i = a.push(item) - 1, up = (i - 1) >> 1; i > 0 && a[up].at > a[i].at; i = up, up = (i - 1) >> 1) {
      [a[up], a[i]] = [a[i], a[up]];
    }
  }
  pop(): Deadline {
    const a = this.items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length === 0) return top;
    a[0] = last;
    for (let i = 0, m = 0; ; i = m) {
      for (const c of [2 * i + 1, 2 * i + 2]) if (c < a.length && a[c].at < a[m].at) m = c;
      if (m === i) return top;
      [a[m], a[i]] = [a[i], a[m]];
    }
  }
  retain(keep: (item: Deadline) => boolean) {
    const kept = this.items.filter(keep);
    this.items = [];
    for (const item of kept) this.push(item);
  }
}

/** One durable consumer's state. It outlives its replicas, so a restarted durable resumes. */
export class Durable {
  filter: Tokens | null = null;
  replicas: Replica[] = [];
  private cursor: number; // next stream sequence never delivered
  private pending = new Map<number, Pending>();
  private rdq: number[] = []; // due for redelivery, read from rdqHead
  private rdqHead = 0;
  private heap = new DeadlineHeap();
  private timer?: { at: number; cancel: () => void };
  private rr = 0;
  private scheduled = false;
  private burst = 0;
  private closed = false;

  constructor(
    private readonly stream: StreamState,
    private options: ConsumerOptions,
    private readonly clock: Clock,
    private readonly prune: (s: StreamState) => void,
  ) {
    this.cursor = options.deliverPolicy === 'new' ? stream.lastSeq + 1 : 1;
    this.configure(options);
  }

  configure(options: ConsumerOptions) {
    this.options = options;
    this.filter = options.filterSubject ? tokens(options.filterSubject) : null;
  }

  schedule() {
    if (this.scheduled || this.replicas.length === 0) return;
    this.scheduled = true;
    // A macrotask, not a microtask: deliveries made in a burst (executions as responses come in)
    // then wait for the I/O phase instead of pre-empting it, so requests still queued on a socket
    // go out first, and consumers get their messages in batches.
    setImmediate(() => {
      this.burst = 0;
      this.dispatch();
    });
  }

  private dispatch() {
    this.scheduled = false;
    this.prune(this.stream);
    while (this.replicas.length > 0) {
      if (this.burst++ >= BURST) return this.schedule();
      let p = this.nextRedelivery();
      if (!p) {
        if (this.pending.size >= (this.options.maxAckPending ?? DEFAULT_MAX_ACK_PENDING)) return;
        const seq = this.nextNew();
        if (seq === undefined) return;
        this.pending.set(seq, (p = { seq, count: 0, deadline: 0, gen: 0 }));
      }
      this.deliver(this.stream.msgs.get(p.seq)!, p);
    }
  }

  private nextRedelivery(): Pending | undefined {
    while (this.rdqHead < this.rdq.length) {
      const p = this.pending.get(this.rdq[this.rdqHead++]);
      if (p?.deadline !== Infinity) continue;
      if (this.stream.msgs.has(p.seq)) return p;
      this.pending.delete(p.seq); // trimmed by maxAge/maxMessages meanwhile: nothing to redeliver
    }
    if (this.rdqHead > 0) [this.rdq, this.rdqHead] = [[], 0];
    return undefined;
  }

  private nextNew(): number | undefined {
    const { msgs, lastSeq } = this.stream;
    let seq = Math.max(this.cursor, this.stream.firstSeq);
    while (seq <= lastSeq) {
      const m = msgs.get(seq++);
      if (m && (!this.filter || matches(this.filter, m.tokens))) return (this.cursor = seq) - 1;
    }
    this.cursor = seq;
    return undefined;
  }

  private deliver(stored: Stored, p: Pending) {
    p.count++;
    const gen = ++p.gen;
    this.arm(p, this.clock.now() + this.options.ackWaitMs);
    const replica = this.replicas[this.rr++ % this.replicas.length];
    let settled = false;
    const current = () => !settled && this.pending.get(p.seq) === p && p.gen === gen;
    // As with JetStream, an ack or term from an earlier delivery still counts; nak and working don't.
    const finish = () => {
      if (!settled) this.finish(p);
      settled = true;
    };
    const msg: BusMessage = {
      subject: stored.subject,
      data: stored.data,
      headers: stored.headers,
      seq: stored.seq,
      deliveryCount: p.count,
      ack: async () => finish(),
      term: finish,
      nak: (delayMs) => {
        if (!current()) return;
        settled = true;
        if (delayMs && delayMs > 0) this.arm(p, this.clock.now() + delayMs);
        else this.expire(p);
      },
      working: () => {
        if (current()) this.arm(p, this.clock.now() + this.options.ackWaitMs);
      },
    };
    let result: unknown;
    try {
      result = replica.handler(msg);
    } catch {
      return msg.nak();
    }
    if (!(result instanceof Promise)) return;
    const run: Promise<void> = result.then(
      () => undefined,
      () => msg.nak(),
    );
    replica.inFlight.add(run);
    void run.finally(() => replica.inFlight.delete(run));
  }

  /** Ack or term: done with the message. A work queue forgets it either way, as JetStream does. */
  private finish(p: Pending) {
    if (this.pending.get(p.seq) !== p) return;
    this.pending.delete(p.seq);
    if (this.stream.config.retention === 'workqueue') {
      const s = this.stream;
      s.msgs.delete(p.seq);
      while (s.firstSeq <= s.lastSeq && !s.msgs.has(s.firstSeq)) s.firstSeq++;
    }
    this.schedule();
  }

  /** Ack wait or nak: redeliver, unless maxDeliver is used up. */
  private expire(p: Pending) {
    if (p.deadline === Infinity) return; // already queued
    const maxDeliver = this.options.maxDeliver ?? -1;
    if (maxDeliver > 0 && p.count >= maxDeliver) {
      this.pending.delete(p.seq);
    } else {
      p.deadline = Infinity;
      this.rdq.push(p.seq);
    }
    this.schedule();
  }

  private arm(p: Pending, at: number) {
    p.deadline = at;
    this.heap.push({ at, p });
    if (this.heap.items.length > 2 * this.pending.size + 1024) this.heap.retain((e) => this.valid(e));
    if (at < (this.timer?.at ?? Infinity)) this.rearm();
  }

  private valid(e: Deadline) {
    return this.pending.get(e.p.seq) === e.p && e.p.deadline === e.at;
  }

  private rearm() {
    this.timer?.cancel();
    this.timer = undefined;
    const at = this.heap.items[0]?.at;
    if (at === undefined || this.closed) return;
    this.timer = { at, cancel: this.clock.setTimer(at, () => this.onTimer()) };
  }

  private onTimer() {
    this.timer = undefined;
    // Reading the clock again also covers a timer that fires a little early.
    const now = this.clock.now();
    while (this.heap.items.length > 0 && this.heap.items[0].at <= now) {
      const e = this.heap.pop();
      if (this.valid(e)) this.expire(e.p);
    }
    this.rearm();
  }

  close() {
    this.closed = true;
    this.rearm();
  }
}
