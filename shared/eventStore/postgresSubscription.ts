/**
 * Subscriptions of the PostgreSQL event store: each pages through `position > checkpoint` to catch
 * up, then sleeps until a NOTIFY says something was appended (by any process). One LISTEN
 * connection per store object wakes all of its subscriptions; nothing polls.
 */
import pg from 'pg';
import type { EventHandler, RecordedEvent, SubscribeOptions, Subscription } from './eventStore.ts';
import { runSubscription } from './subscriptionLoop.ts';

export const PAGE_SIZE = 256;
const RECONNECT_MIN_MS = 100;
export const RECONNECT_MAX_MS = 5_000;

/**
 * Holds the LISTEN connection. `version` moves on every notification and after every reconnect
 * (notifications sent while the connection was down are lost, so waiters must look again).
 */
export class AppendListener {
  version = 0;
  private readonly waiters = new Set<() => void>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private delay = RECONNECT_MIN_MS;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly onTrouble: (error: unknown) => void,
  ) {}

  /** Resolves once LISTEN is in place (the first call connects). */
  ready(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  /** Resolves on the next notification, or at once if one came after `seen`. `abort` ends the wait early. */
  wait(seen: number, abort: (wake: () => void) => void): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.closed || this.version !== seen) return resolve();
      const done = () => {
        this.waiters.delete(done);
        resolve();
      };
      this.waiters.add(done);
      abort(done);
    });
  }

  async close() {
    this.closed = true;
    this.wakeAll();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private wakeAll() {
    this.version++;
    for (const wake of [...this.waiters]) wake();
  }

  private async connect() {
    const client = new pg.Client({ connectionString: this.connectionString, keepAlive: true });
    client.on('notification', () => this.wakeAll());
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the LISTEN connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) return void (await client.end().catch(() => undefined));
    this.client = client;
    this.delay = RECONNECT_MIN_MS;
    // Appends committed before LISTEN took effect sent their NOTIFY to nobody: look again.
    this.wakeAll();
  }

  /** The connection broke: reconnect with backoff for as long as the store is open. */
  private lost(client: pg.Client, error: unknown) {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.onTrouble(error);
    const retry = () => {
      if (this.closed || this.client) return;
      this.ready().catch((again: unknown) => {
        this.onTrouble(again);
        this.delay = Math.min(this.delay * 2, RECONNECT_MAX_MS);
        setTimeout(retry, this.delay).unref();
      });
    };
    setTimeout(retry, this.delay).unref();
  }
}

export interface PageSource {
  listener: AppendListener;
  /** Resolves once the listener is in place; failures come out translated. */
  ready: () => Promise<void>;
  /** Up to PAGE_SIZE events after `checkpoint`, in position order; failures come out translated. */
  readPage: (options: SubscribeOptions, checkpoint: bigint) => Promise<RecordedEvent[]>;
  /** Each subscription is in here until closed, so closing the store closes it. */
  subscriptions: Set<Subscription>;
}

export function startSubscription(source: PageSource, options: SubscribeOptions, handler: EventHandler, onError?: (error: unknown) => void): Subscription {
  const { listener } = source;
  let checkpoint = options.fromPosition ?? 0n;
  return runSubscription(
    source.subscriptions,
    async (state) => {
      await source.ready();
      // While the handler works through a full page, the next one is already being read.
      let ahead: { version: number; page: Promise<RecordedEvent[]> } | undefined;
      const read = (after: bigint) => {
        // The version is taken before the read: a NOTIFY arriving meanwhile must not be slept through.
        const next = { version: listener.version, page: source.readPage(options, after) };
        next.page.catch(() => undefined); // a failure surfaces where the page is awaited
        return next;
      };
      while (!state.stopped) {
        const current = ahead ?? read(checkpoint);
        const version = current.version;
        const events = await current.page;
        ahead = events.length === PAGE_SIZE ? read(events[PAGE_SIZE - 1]!.position) : undefined;
        for (const event of events) {
          if (state.stopped) return;
          await handler(event);
          checkpoint = event.position;
        }
        if (events.length < PAGE_SIZE) {
          state.markCaughtUp();
          if (state.stopped) return; // close() came during the read: there is no wait to interrupt
          await listener.wait(version, (wake) => (state.interrupt = wake));
          state.interrupt = undefined;
        }
      }
    },
    onError,
  );
}
