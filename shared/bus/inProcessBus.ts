import type { Bus, BusMessage, Consumer, ConsumerOptions, MessageHandler, PublishOptions, PublishResult, StreamConfig } from './bus.ts';
import { systemClock, type Clock } from '../clock.ts';

/** NATS's default for pull consumers; both adapters use it when maxAckPending is absent. */
const DEFAULT_MAX_ACK_PENDING = 1000;
/** Deliveries in a row before dispatch yields to the event loop, so I/O is not starved. */
const BURST = 2000;

type Tokens = string[];
const tokens = (subject: string): Tokens => subject.split('.');

function matches(pattern: Tokens, subject: Tokens): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p === '>') return subject.length > i;
    if (i >= subject.length || (p !== '*' && p !== subject[i])) return false;
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

interface Stored {
  seq: number;
  subject: string;
  tokens: Tokens;
  data: Uint8Array;
  headers: Record<string, string>;
  time: number;
}

interface StreamState {
  config: StreamConfig;
  patterns: Tokens[];
  msgs: Map<number, Stored>; // insertion order is sequence order
  lastSeq: number;
  ids: Map<string, { seq: number; at: number }>; // insertion order is time order
  durables: Map<string, Durable>;
}

interface Pending {
  seq: number;
  count: number;
  /** When it becomes due for redelivery (ack wait or nak delay); Infinity while queued for it. */
  deadline: number;
  ready: boolean;
  /** Bumped per delivery: nak/working from an earlier delivery must not touch the current one. */
  gen: number;
}

interface Replica {
  handler: MessageHandler;
  inFlight: Set<Promise<void>>;
}

/** Min-heap of redelivery deadlines; entries go stale rather than being removed. */
class DeadlineHeap {
  items: { at: number; p: Pending }[] = [];
  push(item: { at: number; p: Pending }) {
    const a = this.items;
    let i = a.push(item) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent].at <= a[i].at) break;
      [a[parent], a[i]] = [a[i], a[parent]];
      i = parent;
    }
  }
  pop() {
    const a = this.items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && a[l].at < a[m].at) m = l;
        if (r < a.length && a[r].at < a[m].at) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
  rebuild(keep: (item: { at: number; p: Pending }) => boolean) {
    const old = this.items.filter(keep);
    this.items = [];
    for (const item of old) this.push(item);
  }
}

/** One durable consumer's state; it outlives its replicas so a restarted durable resumes. */
class Durable {
  cursor: number;
  pending = new Map<number, Pending>();
  rdq: number[] = [];
  rdqHead = 0;
  heap = new DeadlineHeap();
  replicas: Replica[] = [];
  rr = 0;
  filter: Tokens | null = null;
  cancelTimer?: () => void;
  armedAt = Infinity;
  scheduled = false;
  burst = 0;
  closed = false;

  constructor(
    readonly stream: StreamState,
    public options: ConsumerOptions,
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
    if (this.burst < BURST) queueMicrotask(() => this.dispatch());
    else
      setImmediate(() => {
        this.burst = 0;
        this.dispatch();
      });
  }

  private dispatch() {
    this.scheduled = false;
    const max = this.options.maxAckPending ?? DEFAULT_MAX_ACK_PENDING;
    this.prune(this.stream);
    while (this.replicas.length > 0) {
      if (this.burst++ >= BURST) return this.schedule();
      let p = this.nextRedelivery();
      let stored = p && this.stream.msgs.get(p.seq);
      if (!p) {
        if (this.pending.size >= max) return;
        stored = this.nextNew();
        if (!stored) return;
        p = { seq: stored.seq, count: 0, deadline: 0, ready: false, gen: 0 };
        this.pending.set(p.seq, p);
      }
      this.deliver(stored!, p);
    }
  }

  private nextRedelivery(): Pending | undefined {
    while (this.rdqHead < this.rdq.length) {
      const p = this.pending.get(this.rdq[this.rdqHead++]);
      if (!p?.ready) continue;
      // Trimmed by maxAge/maxMessages meanwhile: nothing left to redeliver.
      if (!this.stream.msgs.has(p.seq)) {
        this.pending.delete(p.seq);
        continue;
      }
      return p;
    }
    this.rdq = [];
    this.rdqHead = 0;
    return undefined;
  }

  private nextNew(): Stored | undefined {
    const { msgs, lastSeq } = this.stream;
    let seq = Math.max(this.cursor, msgs.keys().next().value ?? lastSeq + 1);
    while (seq <= lastSeq) {
      const m = msgs.get(seq++);
      if (m && (!this.filter || matches(this.filter, m.tokens))) {
        this.cursor = seq;
        return m;
      }
    }
    this.cursor = seq;
    return undefined;
  }

  private deliver(stored: Stored, p: Pending) {
    p.count++;
    p.ready = false;
    const gen = ++p.gen;
    this.arm(p, this.clock.now() + this.options.ackWaitMs);
    const replica = this.replicas[this.rr++ % this.replicas.length];
    let settled = false;
    const current = () => !settled && this.pending.get(p.seq) === p && p.gen === gen;
    const msg: BusMessage = {
      subject: stored.subject,
      data: stored.data,
      headers: stored.headers,
      seq: stored.seq,
      deliveryCount: p.count,
      // Like JetStream, an ack from an earlier delivery still counts.
      ack: async () => {
        if (!settled) this.finish(p);
        settled = true;
      },
      nak: (delayMs) => {
        if (!current()) return;
        settled = true;
        if (delayMs && delayMs > 0) this.arm(p, this.clock.now() + delayMs);
        else this.expire(p);
      },
      term: () => {
        if (!settled) this.finish(p);
        settled = true;
      },
      working: () => {
        if (current()) this.arm(p, this.clock.now() + this.options.ackWaitMs);
      },
    };
    let result: unknown;
    try {
      result = replica.handler(msg);
    } catch {
      msg.nak();
      return;
    }
    if (result instanceof Promise) {
      const run: Promise<void> = result.then(
        () => undefined,
        () => msg.nak(),
      );
      replica.inFlight.add(run);
      void run.finally(() => replica.inFlight.delete(run));
    }
  }

  /** Ack or term: done with the message; a work queue forgets it either way, as JetStream does. */
  private finish(p: Pending) {
    if (this.pending.get(p.seq) !== p) return;
    this.pending.delete(p.seq);
    if (this.stream.config.retention === 'workqueue') this.stream.msgs.delete(p.seq);
    this.schedule();
  }

  private expire(p: Pending) {
    const maxDeliver = this.options.maxDeliver ?? -1;
    if (maxDeliver > 0 && p.count >= maxDeliver) {
      this.pending.delete(p.seq);
    } else {
      p.ready = true;
      p.deadline = Infinity;
      this.rdq.push(p.seq);
    }
    this.schedule();
  }

  private arm(p: Pending, at: number) {
    p.deadline = at;
    this.heap.push({ at, p });
    if (this.heap.items.length > 2 * this.pending.size + 1024) this.heap.rebuild((e) => this.valid(e));
    if (at < this.armedAt) this.rearm();
  }

  private valid(e: { at: number; p: Pending }) {
    return this.pending.get(e.p.seq) === e.p && !e.p.ready && e.p.deadline === e.at;
  }

  private rearm() {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.armedAt = Infinity;
    const top = this.heap.items[0];
    if (!top || this.closed) return;
    this.armedAt = top.at;
    this.cancelTimer = this.clock.setTimer(top.at, () => this.onTimer());
  }

  private onTimer() {
    this.cancelTimer = undefined;
    // Re-reading the clock also guards against a timer that fires a little early.
    const now = this.clock.now();
    while (this.heap.items.length > 0 && this.heap.items[0].at <= now) {
      const e = this.heap.pop();
      if (this.valid(e)) this.expire(e.p);
    }
    this.armedAt = Infinity;
    this.rearm();
  }

  close() {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.armedAt = Infinity;
  }
}

/**
 * The embedded-mode bus: JetStream semantics (sequences, de-duplication, work queues, durable
 * consumers with ack wait, nak delay, maxAckPending, maxDeliver) held in memory for the bus's life.
 */
export function createInProcessBus(options: { clock?: Clock } = {}): Bus {
  const clock = options.clock ?? systemClock;
  const streams = new Map<string, StreamState>();
  const subscribers = new Set<{ pattern: Tokens; handler: (subject: string, data: Uint8Array, headers: Record<string, string>) => void }>();
  const replicas = new Set<{ stop(): Promise<void> }>();
  const routes = new Map<string, StreamState | undefined>(); // subject -> stream, reset when streams change
  let closed = false;

  const open = (action: string) => {
    if (closed) throw new Error(`bus: ${action}: bus is closed`);
  };

  const prune = (s: StreamState) => {
    const { maxAgeMs, maxMessages } = s.config;
    const now = clock.now();
    for (const [seq, m] of s.msgs) {
      const tooMany = maxMessages && maxMessages > 0 && s.msgs.size > maxMessages;
      if (!tooMany && !(maxAgeMs && maxAgeMs > 0 && m.time <= now - maxAgeMs)) break;
      s.msgs.delete(seq);
    }
    for (const [id, e] of s.ids) {
      if (e.at > now - s.config.duplicateWindowMs) break;
      s.ids.delete(id);
    }
  };

  const bus: Bus = {
    async ensureStream(config) {
      open(`ensure stream "${config.name}"`);
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
      const s = existing ?? { config, patterns, msgs: new Map(), lastSeq: 0, ids: new Map(), durables: new Map() };
      Object.assign(s, { config: { ...config }, patterns });
      streams.set(config.name, s);
      routes.clear();
      prune(s);
    },

    async publish(subject, data, options: PublishOptions = {}): Promise<PublishResult> {
      open(`publish to "${subject}"`);
      const subjectTokens = tokens(subject);
      const headers = { ...options.headers };
      const copy = data.slice();
      // Core subscribers see every publish, duplicates included, as with NATS.
      for (const sub of subscribers) {
        if (matches(sub.pattern, subjectTokens)) queueMicrotask(() => sub.handler(subject, copy, headers));
      }
      if (!routes.has(subject)) {
        routes.set(subject, [...streams.values()].find((c) => c.patterns.some((p) => matches(p, subjectTokens))));
      }
      const s = routes.get(subject);
      if (!s) throw new Error(`bus: publish to "${subject}": no stream holds this subject`);
      const now = clock.now();
      const seen = options.msgId !== undefined ? s.ids.get(options.msgId) : undefined;
      if (seen && seen.at > now - s.config.duplicateWindowMs) return { stream: s.config.name, seq: seen.seq, duplicate: true };
      if (seen) s.ids.delete(options.msgId!); // re-inserted below, keeping the map in time order
      const seq = ++s.lastSeq;
      s.msgs.set(seq, { seq, subject, tokens: subjectTokens, data: copy, headers, time: now });
      if (options.msgId !== undefined) s.ids.set(options.msgId, { seq, at: now });
      prune(s);
      for (const d of s.durables.values()) d.schedule();
      return { stream: s.config.name, seq, duplicate: false };
    },

    async consume(options: ConsumerOptions, handler: MessageHandler): Promise<Consumer> {
      open(`consume "${options.durable}"`);
      const fail = (why: string) => new Error(`bus: consumer "${options.durable}" on stream "${options.stream}": ${why}`);
      const s = streams.get(options.stream);
      if (!s) throw fail('stream not found');
      if (s.config.retention === 'workqueue') {
        if (options.deliverPolicy === 'new') throw fail('a work queue consumer must deliver all');
        const mine = tokens(options.filterSubject ?? '>');
        for (const [name, other] of s.durables) {
          if (name !== options.durable && overlaps(mine, other.filter ?? ['>'])) {
            throw fail(`filter overlaps consumer "${name}" on this work queue stream`);
          }
        }
      }
      let d = s.durables.get(options.durable);
      if (d) d.configure(options);
      else s.durables.set(options.durable, (d = new Durable(s, options, clock, prune)));
      const durable = d;
      const replica: Replica = { handler, inFlight: new Set() };
      durable.replicas.push(replica);
      durable.schedule();
      const consumer = {
        async stop() {
          replicas.delete(consumer);
          const i = durable.replicas.indexOf(replica);
          if (i >= 0) durable.replicas.splice(i, 1);
          await Promise.allSettled([...replica.inFlight]);
        },
      };
      replicas.add(consumer);
      return consumer;
    },

    async subscribe(subject, handler) {
      open(`subscribe to "${subject}"`);
      const sub = {
        pattern: tokens(subject),
        handler: (subj: string, data: Uint8Array, headers: Record<string, string>) => {
          try {
            handler(subj, data, headers);
          } catch (e) {
            // A failing live listener must not break the publisher.
            console.error(`bus: subscriber to "${subject}" threw`, e);
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
      await Promise.all([...replicas].map((r) => r.stop()));
      for (const s of streams.values()) for (const d of s.durables.values()) d.close();
    },
  };
  return bus;
}
