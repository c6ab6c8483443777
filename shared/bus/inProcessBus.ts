import type { Bus, Consumer, ConsumerOptions, MessageHandler, PublishOptions, PublishResult, StreamConfig, StreamEntry } from './bus.ts';
import { systemClock, type Clock } from '../clock.ts';
import { DuplicateWindow } from './duplicateWindow.ts';
import { Durable, matches, overlaps, tokens, type Headers, type Replica, type StreamState, type Tokens } from './inProcessDurable.ts';

/**
 * The embedded-mode bus: JetStream semantics (sequences, de-duplication, work queues, durable
 * consumers with ack wait, nak delay, maxAckPending, maxDeliver) held in memory for the bus's life.
 */
export interface InProcessBus extends Bus {
  /** A stream's configuration as it stands (for checks and operators), or undefined. */
  streamConfig(name: string): StreamConfig | undefined;
}

/** A reader of a whole stream (Bus.watch): its cursor, and the current() calls waiting for it. */
interface Watcher {
  stream: StreamState;
  handler: (entry: StreamEntry) => void;
  seen: number;
  queued: boolean;
  stopped: boolean;
  waiters: Set<() => void>;
}

/** Hands a watcher what its stream stored since it last ran, in a microtask (as a publish's subscribers get theirs). */
function pump(w: Watcher) {
  if (w.queued) return;
  w.queued = true;
  queueMicrotask(() => {
    w.queued = false;
    if (w.stopped) return;
    const s = w.stream;
    for (let seq = Math.max(w.seen + 1, s.firstSeq); seq <= s.lastSeq; seq++) {
      w.seen = seq;
      const m = s.msgs.get(seq); // a work queue's acked messages are gone
      if (!m) continue;
      try {
        w.handler({ subject: m.subject, data: m.data, seq });
      } catch (e) {
        console.error(`bus: watcher of stream "${s.config.name}" threw`, e);
      }
    }
    w.seen = Math.max(w.seen, s.lastSeq);
    for (const wake of w.waiters) wake();
  });
}

/** True once the watcher has had everything its stream holds now; false after `timeoutMs`. */
function caughtUp(w: Watcher, timeoutMs: number): Promise<boolean> {
  const target = w.stream.lastSeq;
  if (w.seen >= target) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      w.waiters.delete(wake);
      resolve(ok);
    };
    const wake = () => (w.stopped ? done(false) : w.seen >= target && done(true));
    const timer = setTimeout(() => done(false), timeoutMs);
    w.waiters.add(wake);
  });
}

export function createInProcessBus(options: { clock?: Clock } = {}): InProcessBus {
  const clock = options.clock ?? systemClock;
  const streams = new Map<string, StreamState>();
  const subscribers = new Set<{ pattern: Tokens; deliver: (subject: string, data: Uint8Array, headers: Headers) => void }>();
  const consumers = new Set<Consumer>();
  const watchers = new Set<Watcher>();
  let closed = false;

  const assertOpen = (action: string) => {
    if (closed) throw new Error(`bus: ${action}: bus is closed`);
  };

  // A handful of streams: matching each is cheaper than a cache keyed by subject (one per job).
  const streamOf = (subject: Tokens) => {
    for (const s of streams.values()) for (const p of s.patterns) if (matches(p, subject)) return s;
    return undefined;
  };

  const prune = (s: StreamState) => {
    const { maxAgeMs = 0, maxMessages = 0 } = s.config;
    const now = clock.now();
    while (s.firstSeq <= s.lastSeq) {
      const m = s.msgs.get(s.firstSeq);
      if (m && !(maxMessages > 0 && s.msgs.size > maxMessages) && !(maxAgeMs > 0 && m.time <= now - maxAgeMs)) break;
      s.msgs.delete(s.firstSeq++);
    }
    s.ids.expire(now);
  };

  return {
    streamConfig: (name) => {
      const config = streams.get(name)?.config;
      return config && { ...config, subjects: [...config.subjects] };
    },

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
      const s = existing ?? { config, patterns, msgs: new Map(), lastSeq: 0, firstSeq: 1, ids: new DuplicateWindow(config.duplicateWindowMs), durables: new Map() };
      Object.assign(s, { config: { ...config }, patterns });
      s.ids.windowMs = config.duplicateWindowMs;
      streams.set(config.name, s);
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
      const s = streamOf(subjectTokens);
      if (!s) throw new Error(`bus: publish to "${subject}": no stream holds this subject`);
      const now = clock.now();
      const { msgId } = options;
      const seen = msgId === undefined ? undefined : s.ids.seen(msgId, now);
      if (seen !== undefined) return { stream: s.config.name, seq: seen, duplicate: true };
      const seq = ++s.lastSeq;
      s.msgs.set(seq, { seq, subject, tokens: subjectTokens, data: copy, headers, time: now });
      if (msgId !== undefined) {
        s.ids.add(msgId, seq, now);
      }
      prune(s);
      for (const d of s.durables.values()) d.schedule();
      for (const w of watchers) if (w.stream === s) pump(w);
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

    async watch(stream, handler) {
      assertOpen(`watch stream "${stream}"`);
      const s = streams.get(stream);
      if (!s) throw new Error(`bus: watch stream "${stream}": stream not found`);
      // As JetStream: a work queue's messages go to one consumer, acked; a reader without acks is refused.
      if (s.config.retention === 'workqueue') throw new Error(`bus: watch stream "${stream}": a work queue stream cannot be watched`);
      const w: Watcher = { stream: s, handler, seen: 0, queued: false, stopped: false, waiters: new Set() };
      watchers.add(w);
      pump(w);
      return {
        current: (timeoutMs) => caughtUp(w, timeoutMs),
        // One process: contact is never lost.
        regainedAt: () => undefined,
        async stop() {
          watchers.delete(w);
          w.stopped = true;
          for (const wake of w.waiters) wake();
        },
      };
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

    async backlog(stream, durable) {
      return streams.get(stream)?.durables.get(durable)?.backlog();
    },

    async close() {
      if (closed) return;
      closed = true;
      subscribers.clear();
      for (const w of watchers) w.stopped = true;
      watchers.clear();
      await Promise.all([...consumers].map((c) => c.stop()));
      for (const s of streams.values()) for (const d of s.durables.values()) d.close();
    },
  };
}
