import type { Bus, BusMessage, Consumer, ConsumerOptions, MessageHandler, PublishOptions, PublishResult, StreamConfig } from './bus.ts';
import { systemClock, type Clock } from '../clock.ts';

/** NATS's default for pull consumers; both adapters use it when maxAckPending is absent. */
const DEFAULT_MAX_ACK_PENDING = 1000;
/** Deliveries in a row before dispatch yields to the event loop, so I/O is not starved. */
const BURST = 2000;

type Tokens = string[];
type Headers = Record<string, string>;
const tokens = (subject: string): Tokens => subject.split('.');

function matches(pattern: Tokens, subject: Tokens): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '>') return subject.length > i;
    if (i >= subject.length || (pattern[i] !== '*' && pattern[i] !== subject[i])) return false;
  }
  return pattern.length === subject.length;
}

/** True when some subject matches both patterns. */
function overlaps(a: Tokens, b: Tokens): boolean {
  for (let i = 0; i < a.length && i < b.length; i++) {
    if (a[i] === '>' || b[i] === '>') return true;
    if (a[i] !== '*' && b[i] !== '*' && a[i] !== b[i]) return false;
  }
  return a.length === b.length;
}

type Stored = { seq: number; subject: string; tokens: Tokens; data: Uint8Array; headers: Headers; time: number };

interface StreamState {
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
type Replica = { handler: MessageHandler; inFlight: Set<Promise<void>> };

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
class Durable {
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
    if (this.burst < BURST) return queueMicrotask(() => this.dispatch());
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

/**
 * The embedded-mode bus: JetStream semantics (sequences, de-duplication, work queues, durable
 * consumers with ack wait, nak delay, maxAckPending, maxDeliver) held in memory for the bus's life.
 */
export function createInProcessBus(options: { clock?: Clock } = {}): Bus {
  const clock = options.clock ?? systemClock;
  const streams = new Map<string, StreamState>();
  const subscribers = new Set<{ pattern: Tokens; deliver: (subject: string, data: Uint8Array, headers: Headers) => void }>();
  const consumers = new Set<Consumer>();
  const routes = new Map<string, StreamState | undefined>(); // subject -> stream; reset when streams change
  let closed = false;

  const assertOpen = (action: string) => {
    if (closed) throw new Error(`bus: ${action}: bus is closed`);
  };

  const prune = (s: StreamState) => {
    const { maxAgeMs = 0, maxMessages = 0, duplicateWindowMs } = s.config;
    const now = clock.now();
    while (s.firstSeq <= s.lastSeq) {
      const m = s.msgs.get(s.firstSeq);
      if (m && !(maxMessages > 0 && s.msgs.size > maxMessages) && !(maxAgeMs > 0 && m.time <= now - maxAgeMs)) break;
      s.msgs.delete(s.firstSeq++);
    }
    while (s.idsHead < s.idOrder.length && s.idOrder[s.idsHead].at <= now - duplicateWindowMs) {
      const { id, at } = s.idOrder[s.idsHead++];
      if (s.ids.get(id)?.at === at) s.ids.delete(id);
    }
    if (s.idsHead > 4096 && s.idsHead * 2 > s.idOrder.length) {
      s.idOrder = s.idOrder.slice(s.idsHead);
      s.idsHead = 0;
    }
  };

  return {
    async ensureStream(config) {
      assertOpen(`ensure stream "${config.name}"`);
      const fail = (why: string) => new Error(`bus: stream "${config.name}": ${why}`);
      if (!config.name || config.subjects.length === 0) throw fail('a name and at least one subject are required');
      if (config.maxAgeMs && config.duplicateWindowMs > config.maxAgeMs) throw fail('duplicate window is longer than max age');
      const patterns = config.subjects.map(tokens);
      for (const other of streams.values()) {
        if (other.config.name !== config.name && patterns.some((a) => other.patterns.some((b) => overlaps(a, b)))) {
          throw fail(`subjects overlap with stream "${other.config.name}"`);
        }
      }
      const existing = streams.get(config.name);
      if (existing && existing.config.retention !== config.retention) throw fail('retention cannot be changed');
      const s = existing ?? { config, patterns, msgs: new Map(), lastSeq: 0, firstSeq: 1, ids: new Map(), idOrder: [], idsHead: 0, durables: new Map() };
      Object.assign(s, { config: { ...config }, patterns });
      streams.set(config.name, s);
      routes.clear();
      prune(s);
    },

    async publish(subject, data, options: PublishOptions = {}): Promise<PublishResult> {
      assertOpen(`publish to "${subject}"`);
      const subjectTokens = tokens(subject);
      const headers = { ...options.headers };
      const copy = data.slice(); // the caller may reuse its buffer, as it may with NATS
      // Core subscribers see every publish, duplicates included, as with NATS.
      for (const sub of subscribers) {
        if (matches(sub.pattern, subjectTokens)) queueMicrotask(() => sub.deliver(subject, copy, headers));
      }
      if (!routes.has(subject)) {
        if (routes.size > 10_000) routes.clear();
        routes.set(subject, [...streams.values()].find((c) => c.patterns.some((p) => matches(p, subjectTokens))));
      }
      const s = routes.get(subject);
      if (!s) throw new Error(`bus: publish to "${subject}": no stream holds this subject`);
      const now = clock.now();
      const { msgId } = options;
      const seen = msgId === undefined ? undefined : s.ids.get(msgId);
      if (seen && seen.at > now - s.config.duplicateWindowMs) return { stream: s.config.name, seq: seen.seq, duplicate: true };
      const seq = ++s.lastSeq;
      s.msgs.set(seq, { seq, subject, tokens: subjectTokens, data: copy, headers, time: now });
      if (msgId !== undefined) {
        s.ids.set(msgId, { seq, at: now });
        s.idOrder.push({ id: msgId, at: now });
      }
      prune(s);
      for (const d of s.durables.values()) d.schedule();
      return { stream: s.config.name, seq, duplicate: false };
    },

    async consume(options: ConsumerOptions, handler: MessageHandler): Promise<Consumer> {
      assertOpen(`consume "${options.durable}"`);
      const fail = (why: string) => new Error(`bus: consume "${options.durable}" on stream "${options.stream}": ${why}`);
      const s = streams.get(options.stream);
      if (!s) throw fail('stream not found');
      // The rules JetStream enforces on work queues, so embedded mode cannot get away with more.
      if (s.config.retention === 'workqueue') {
        if (options.deliverPolicy === 'new') throw fail('a work queue consumer must deliver all');
        const mine = tokens(options.filterSubject ?? '>');
        for (const [name, other] of s.durables) {
          if (name !== options.durable && overlaps(mine, other.filter ?? ['>'])) {
            throw fail(`filter overlaps consumer "${name}" on this work queue stream`);
          }
        }
      }
      let durable = s.durables.get(options.durable);
      if (durable) durable.configure(options);
      else s.durables.set(options.durable, (durable = new Durable(s, options, clock, prune)));
      const replica: Replica = { handler, inFlight: new Set() };
      const { replicas } = durable;
      replicas.push(replica);
      durable.schedule();
      const consumer: Consumer = {
        async stop() {
          consumers.delete(consumer);
          if (replicas.includes(replica)) replicas.splice(replicas.indexOf(replica), 1);
          await Promise.allSettled([...replica.inFlight]);
        },
      };
      consumers.add(consumer);
      return consumer;
    },

    async notify(subject, data) {
      assertOpen(`notify "${subject}"`);
      const subjectTokens = tokens(subject);
      const copy = data.slice();
      for (const sub of subscribers) {
        if (matches(sub.pattern, subjectTokens)) queueMicrotask(() => sub.deliver(subject, copy, {}));
      }
    },

    async subscribe(subject, handler) {
      assertOpen(`subscribe to "${subject}"`);
      const sub = {
        pattern: tokens(subject),
        deliver: (subj: string, data: Uint8Array, headers: Headers) => {
          if (!subscribers.has(sub)) return; // unsubscribed after the publish was queued
          try {
            handler(subj, data, headers);
          } catch (e) {
            console.error(`bus: subscriber to "${subject}" threw`, e); // must not break the publisher
          }
        },
      };
      subscribers.add(sub);
      return { unsubscribe: async () => void subscribers.delete(sub) };
    },

    async close() {
      if (closed) return;
      closed = true;
      subscribers.clear();
      await Promise.all([...consumers].map((c) => c.stop()));
      for (const s of streams.values()) for (const d of s.durables.values()) d.close();
    },
  };
}
