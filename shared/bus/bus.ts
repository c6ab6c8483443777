/**
 * The message bus port. Adapters: in-process (embedded mode) and NATS JetStream. One contract
 * suite (test/contract/busContract.ts) runs against each.
 *
 * Streams persist messages published on their subjects. Durable consumers read a stream: replicas
 * that use the same durable name compete for its messages (a work queue); different durable names
 * each get every message of a 'limits' stream (fan-out). A 'workqueue' stream allows one durable per
 * subject and deletes a message once it is acked.
 */

export interface StreamConfig {
  name: string;
  /** Subject patterns, NATS syntax: tokens separated by '.', '*' one token, '>' the rest. */
  subjects: string[];
  retention: 'workqueue' | 'limits';
  /** Publishes with a message id already seen within this window are dropped. */
  duplicateWindowMs: number;
  /** Messages older than this are discarded (limits streams); 0: kept. */
  maxAgeMs?: number;
  /** Keep at most this many messages (oldest dropped); 0 or absent: unlimited. */
  maxMessages?: number;
}

export interface PublishOptions {
  /** De-duplication id: a second publish with the same id within the stream's window is dropped. */
  msgId?: string;
  headers?: Record<string, string>;
  /**
   * How long to wait for the stream's acknowledgement before failing (the adapter's default when
   * absent): a caller that retries on its own fails fast while the bus is away.
   */
  timeoutMs?: number;
}

export interface PublishResult {
  stream: string;
  seq: number;
  duplicate: boolean;
}

export interface BusMessage {
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
  /** Stream sequence of the message. */
  seq: number;
  /** 1 on first delivery, more on redelivery. */
  deliveryCount: number;
  ack(): Promise<void>;
  /** Asks for redelivery, after `delayMs` when given. */
  nak(delayMs?: number): void;
  /** Never redeliver (poison message). */
  term(): void;
  /** Resets the ack timer: the handler is still working. */
  working(): void;
}

export interface ConsumerOptions {
  stream: string;
  durable: string;
  /** Only subjects matching this pattern. */
  filterSubject?: string;
  /** Unacked messages are redelivered after this long. */
  ackWaitMs: number;
  /** At most this many messages delivered and not yet acked, across the durable's replicas. */
  maxAckPending?: number;
  /** Give up on a message after this many deliveries (-1 or absent: never). */
  maxDeliver?: number;
  /** Where a new durable starts: 'all' (default) or only messages published after it exists ('new'). */
  deliverPolicy?: 'all' | 'new';
}

export type MessageHandler = (msg: BusMessage) => Promise<void> | void;

/** One message of a watched stream. */
export interface StreamEntry {
  subject: string;
  data: Uint8Array;
  seq: number;
}

/**
 * A private, ordered reading of a whole stream (see Bus.watch): no durable, no acks, nothing shared
 * with any other reader.
 */
export interface Watch {
  /**
   * Resolves true once the handler has had every message the stream held when this was called,
   * which takes a round trip to the bus: proof that nothing stored before now was missed. False
   * when that takes longer than `timeoutMs` (the bus is out of reach).
   */
  current(timeoutMs: number): Promise<boolean>;
  /**
   * When this reader last came back after losing contact with the bus (a reconnect, or a
   * current() that timed out followed by one that did not); undefined if it never lost it.
   */
  regainedAt(): number | undefined;
  stop(): Promise<void>;
}

export interface Consumer {
  /** Stops fetching; unacked messages are left for redelivery. Resolves when handlers have settled. */
  stop(): Promise<void>;
}

export interface Bus {
  /** Creates the stream, or updates it to this config. Idempotent. */
  ensureStream(config: StreamConfig): Promise<void>;
  /** Publishes to the stream that holds `subject`; resolves once stored (JetStream ack). */
  publish(subject: string, data: Uint8Array, options?: PublishOptions): Promise<PublishResult>;
  /**
   * Consumes a durable consumer. Handlers run concurrently up to maxAckPending. A handler that
   * throws gets its message nak'ed. Messages neither acked nor nak'ed are redelivered after ackWaitMs.
   */
  consume(options: ConsumerOptions, handler: MessageHandler): Promise<Consumer>;
  /**
   * Reads every message the stream holds, in order, then each one stored after, into `handler`
   * (synchronously, one at a time). After a lost connection it resumes after the last message
   * handed over, so a reader cut off for a while misses nothing the stream still holds. A 'limits'
   * stream only: a work queue's messages each go to one consumer.
   */
  watch(stream: string, handler: (entry: StreamEntry) => void): Promise<Watch>;
  /** Live fan-out of a message no stream keeps (a notice): only current subscribers get it, at most once. */
  notify(subject: string, data: Uint8Array): Promise<void>;
  /** Live fan-out, nothing persisted: every subscriber gets each message published (or published to a stream) after it subscribed. */
  subscribe(subject: string, handler: (subject: string, data: Uint8Array, headers: Record<string, string>) => void): Promise<{ unsubscribe(): Promise<void> }>;
  /**
   * A durable consumer's backlog (for metrics): messages not yet delivered to it, and delivered but
   * not acked; undefined when the durable does not exist. Optional: a thread's view of a bus has none.
   */
  backlog?(stream: string, durable: string): Promise<{ pending: number; ackPending: number } | undefined>;
  close(): Promise<void>;
}
