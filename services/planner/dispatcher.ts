import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import type { PlannedRun } from './catchUp.ts';

/**
 * A run ready for the bus. `encode` is called when the publish starts, not when the run falls
 * due: at the top of a minute thousands fall due at once, and encoding them all before the
 * first publish would hold every one of them back by the time it takes to encode the rest.
 */
export interface Outgoing {
  order: PlannedRun;
  /** The bus de-duplication id; the run id when absent. */
  msgId?: string;
  subject: string;
  encode: () => Uint8Array;
}

export interface LatenessFigures {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface DispatchStats {
  published: number;
  /** Publishes the bus dropped as already seen (another replica, or a replay after a restart). */
  duplicates: number;
  /** Failed publishes (each retried until it succeeds). */
  errors: number;
  /** On-time runs: ack time minus due time, ms (late runs after downtime are not counted). */
  lateness: LatenessFigures;
}

const SAMPLES = 1 << 16;
const MAX_BACKOFF_MS = 30_000;

/**
 * Puts due runs on the bus with bounded concurrency: at the top of a minute thousands fall due in
 * the same millisecond, and firing them all at once would queue them in the client anyway while
 * holding every buffer. A failed publish is retried with backoff (the msgId makes a retry that
 * did land harmless) and holds the watermark back until it succeeds.
 */
export class Dispatcher {
  private queue: Outgoing[] = [];
  private head = 0;
  private inFlight = 0;
  private retrying = new Set<() => void>();
  /** Due time -> runs not yet acked (queued, in flight or retrying): what the watermark waits for. */
  private pending = new Map<number, number>();
  private idleWaiters: (() => void)[] = [];
  private samples = new Float64Array(SAMPLES);
  private sampleCount = 0;
  private maxLateness = 0;
  private published = 0;
  private duplicates = 0;
  private errors = 0;
  private stopped = false;

  constructor(
    private readonly bus: Bus,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly concurrency = 256,
  ) {}

  enqueue(item: Outgoing) {
    if (this.stopped) return;
    const at = item.order.scheduledAt;
    this.pending.set(at, (this.pending.get(at) ?? 0) + 1);
    this.queue.push(item);
    this.pump();
  }

  /** The earliest due time not yet acked by the bus, or Infinity. */
  lowestPending(): number {
    let low = Infinity;
    for (const at of this.pending.keys()) if (at < low) low = at;
    return low;
  }

  /** Resolves once nothing is queued, in flight or waiting for a retry. */
  idle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stats(): DispatchStats {
    const n = Math.min(this.sampleCount, SAMPLES);
    const sorted = this.samples.slice(0, n).sort();
    const at = (q: number) => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.floor(q * n))]!);
    return {
      published: this.published,
      duplicates: this.duplicates,
      errors: this.errors,
      lateness: { count: this.sampleCount, p50: at(0.5), p99: at(0.99), max: this.maxLateness },
    };
  }

  /** Stops publishing; resolves once publishes in flight have settled. What is still queued is dropped (the next start catches up). */
  async stop() {
    this.stopped = true;
    for (const cancel of this.retrying) cancel();
    this.retrying.clear();
    this.queue = [];
    this.head = 0;
    while (this.inFlight > 0) await new Promise((r) => setImmediate(r));
    this.pending.clear();
    this.settleIdle();
  }

  private pump() {
    while (this.inFlight < this.concurrency && this.head < this.queue.length) {
      const item = this.queue[this.head++]!;
      this.send(item, 0);
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 65_536) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private send(item: Outgoing, attempt: number) {
    this.inFlight++;
    const { order } = item;
    let publishing: Promise<{ duplicate: boolean }>;
    try {
      publishing = this.bus.publish(item.subject, item.encode(), { msgId: item.msgId ?? order.runId });
    } catch (error) {
      publishing = Promise.reject(error);
    }
    publishing.then(
      (result) => {
        this.inFlight--;
        this.published++;
        if (result.duplicate) this.duplicates++;
        if (order.missed === 0 && order.lateByMs === 0) this.sample(this.clock.now() - order.scheduledAt);
        this.done(order.scheduledAt);
        this.pump();
      },
      (error) => {
        this.inFlight--;
        this.errors++;
        if (this.stopped) return this.pump();
        const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(attempt, 6));
        this.log.warn('publishing a due run failed; retrying', { runId: order.runId, attempt: attempt + 1, retryInMs: wait, error });
        const retry = () => {
          this.retrying.delete(cancel);
          if (!this.stopped) this.send(item, attempt + 1);
        };
        const cancel = this.clock.setTimer(this.clock.now() + wait, retry);
        this.retrying.add(cancel);
        this.pump();
      },
    );
  }

  private done(at: number) {
    const left = (this.pending.get(at) ?? 1) - 1;
    if (left > 0) this.pending.set(at, left);
    else this.pending.delete(at);
    if (this.pending.size === 0) this.settleIdle();
  }

  private settleIdle() {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private sample(ms: number) {
    const v = Math.max(0, ms);
    this.samples[this.sampleCount++ % SAMPLES] = v;
    if (v > this.maxLateness) this.maxLateness = v;
  }
}
