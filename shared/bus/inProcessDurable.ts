import type { BusMessage, ConsumerOptions, MessageHandler, StreamConfig } from './bus.ts';
import type { Clock } from '../clock.ts';
import { DeadlineHeap, type Deadline } from './deadlineHeap.ts';
import type { DuplicateWindow } from './duplicateWindow.ts';

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
  ids: DuplicateWindow;
  durables: Map<string, Durable>;
}

/** A delivered, not yet acked message of one durable. */
export interface Pending {
  seq: number;
  count: number;
  /** Due for redelivery then (ack wait or nak delay); Infinity once queued for redelivery. */
  deadline: number;
  /** Bumped per delivery: nak/working from an earlier delivery must not touch the current one. */
  gen: number;
}

export type Replica = { handler: MessageHandler; inFlight: Set<Promise<void>> };

/**
 * One delivery as its handler sees it. A class, not an object of closures: one is made per
 * message, thousands a second.
 */
class Delivered implements BusMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Headers;
  readonly seq: number;
  readonly deliveryCount: number;
  private readonly gen: number;
  private settled = false;

  constructor(
    private readonly durable: Durable,
    stored: Stored,
    private readonly p: Pending,
  ) {
    this.subject = stored.subject;
    this.data = stored.data;
    this.headers = stored.headers;
    this.seq = stored.seq;
    this.deliveryCount = p.count;
    this.gen = ++p.gen;
  }

  // As with JetStream, an ack or term from an earlier delivery still counts; nak and working don't.
  async ack() {
    this.term();
  }

  term() {
    if (!this.settled) this.durable.finish(this.p);
    this.settled = true;
  }

  nak(delayMs?: number) {
    if (this.settled || !this.durable.isCurrent(this.p, this.gen)) return;
    this.settled = true;
    this.durable.nakked(this.p, delayMs);
  }

  working() {
    if (!this.settled && this.durable.isCurrent(this.p, this.gen)) this.durable.extend(this.p);
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
  private heap = new DeadlineHeap<Pending>();
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

  /** Not yet delivered (every stored message past the cursor; the filter is not applied) and not yet acked. */
  backlog() {
    const from = Math.max(this.cursor, this.stream.firstSeq);
    return { pending: Math.max(0, this.stream.lastSeq - from + 1), ackPending: this.pending.size };
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
      const p = this.pending.get(this.rdq[this.rdqHead++]!); // rdqHead < length: checked above
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
    this.arm(p, this.clock.now() + this.options.ackWaitMs);
    const replica = this.replicas[this.rr++ % this.replicas.length];
    // Called only while replicas.length > 0 (see drain): this guard never returns in practice.
    if (!replica) return;
    const msg = new Delivered(this, stored, p);
    let result: unknown;
    try {
      result = replica.handler(msg);
    } catch {
      return msg.nak();
    }
    if (!(result instanceof Promise)) return;
    const run: Promise<void> = result.then(undefined, () => msg.nak());
    replica.inFlight.add(run);
    void run.finally(() => replica.inFlight.delete(run));
  }

  /** The delivery is still the current one of its message (not acked, not redelivered since). */
  isCurrent(p: Pending, gen: number) {
    return this.pending.get(p.seq) === p && p.gen === gen;
  }

  /** A handler's nak: redeliver after `delayMs`, or at once. */
  nakked(p: Pending, delayMs?: number) {
    if (delayMs && delayMs > 0) this.arm(p, this.clock.now() + delayMs);
    else this.expire(p);
  }

  /** A handler's working(): the ack wait starts over. */
  extend(p: Pending) {
    this.arm(p, this.clock.now() + this.options.ackWaitMs);
  }

  /** Ack or term: done with the message. A work queue forgets it either way, as JetStream does. */
  finish(p: Pending) {
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

  private valid(e: Deadline<Pending>) {
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
    for (let e = this.heap.items[0]; e !== undefined && e.at <= now; e = this.heap.items[0]) {
      this.heap.pop();
      if (this.valid(e)) this.expire(e.p);
    }
    this.rearm();
  }

  close() {
    this.closed = true;
    this.rearm();
  }
}
