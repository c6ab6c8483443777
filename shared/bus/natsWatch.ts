import { DeliverPolicy, type ConsumerMessages, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '../log.ts';
import { supervise, type SupervisedRun } from '../supervise.ts';
import type { StreamEntry, Watch } from './bus.ts';
import { busError } from './natsConsumer.ts';

/** What a watch needs of its bus: JetStream (read at each use: the connection may be replaced) and when it last reconnected. */
export interface NatsWatchContext {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  log: Logger;
  reconnectedAt(): number | undefined;
}

/**
 * Pulls are short so that a reader whose consumer the server lost (a restart: ephemeral consumers
 * are not kept) notices within seconds, from the missing heartbeats, and makes it again.
 */
const PULL = { max_messages: 1000, expires: 5000 };

/**
 * Bus.watch on JetStream: an ordered consumer (ephemeral, no acks, made again by nats.js after a
 * gap or missing heartbeats) from the stream's start, then from the last message handed over each
 * time the watch is made again (a new connection, a lost consumer). current() asks the server for
 * the stream's last sequence and waits until the reader has passed it.
 */
export async function startNatsWatch(context: NatsWatchContext, stream: string, handler: (entry: StreamEntry) => void): Promise<Watch> {
  const { log } = context;
  let seen = 0;
  let lost = false;
  let regained: number | undefined;
  let lastProof = 0;
  const waiters = new Set<() => void>();
  let live: SupervisedRun | null = null;

  const startRun = async (): Promise<SupervisedRun> => {
    let iterator: ConsumerMessages;
    try {
      const from = seen > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: seen + 1 } : { deliver_policy: DeliverPolicy.All };
      const consumer = await context.js.consumers.get(stream, from);
      iterator = await consumer.consume(PULL);
    } catch (e) {
      throw busError(`watch stream "${stream}"`, e);
    }
    const ended = (async () => {
      for await (const m of iterator) {
        if (m.seq <= seen) continue;
        seen = m.seq;
        try {
          handler({ subject: m.subject, data: m.data, seq: m.seq });
        } catch (e) {
          log.error('watcher of a stream threw', { stream, seq: m.seq, error: e });
        }
        for (const wake of waiters) wake();
      }
      const closed = await iterator.closed();
      if (closed instanceof Error) throw closed;
    })();
    ended.catch(() => undefined);
    const run = {
      ended,
      async stop() {
        await iterator.close().catch(() => undefined);
        await ended.catch(() => undefined);
      },
    };
    live = run;
    return run;
  };

  // The first run must work (a missing stream fails the caller); later ones are retried forever.
  let initial: SupervisedRun | null = await startRun();
  const supervisor = supervise({
    name: `watch ${stream}`,
    log,
    maxDelayMs: 1000,
    start: async () => {
      const next = initial ?? (await startRun());
      initial = null;
      return next;
    },
  });
  await supervisor.started;

  // current() calls made in one turn of the event loop share one question to the server, asked after all of them.
  let asking: Promise<{ last: number; created: string }> | null = null;
  const lastSeq = () => {
    asking ??= new Promise((resolve, reject) =>
      setImmediate(() => {
        asking = null;
        context.jsm.streams.info(stream).then((info) => resolve({ last: info.state.last_seq, created: info.created }), reject);
      }),
    );
    return asking;
  };
  // The stream this reader follows: made again (a server that came back without it), it starts over.
  let created: string | undefined;

  const passed = (target: number, until: number) =>
    new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        waiters.delete(wake);
        resolve(ok);
      };
      const wake = () => seen >= target && done(true);
      const timer = setTimeout(() => done(false), Math.max(0, until - Date.now()));
      waiters.add(wake);
      wake();
    });

  return {
    async current(timeoutMs) {
      const until = Date.now() + timeoutMs;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answer = await Promise.race([
        lastSeq().catch(() => undefined),
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs))),
      ]).finally(() => clearTimeout(timer));
      let ok = false;
      if (answer !== undefined && created !== undefined && answer.created !== created) {
        // The server came back without the stream: read the new one from its start.
        log.warn('watched stream was made again; reading it from its start', { stream, seen, last: answer.last });
        created = answer.created;
        seen = 0;
        await live?.stop();
      } else if (answer !== undefined) {
        created = answer.created;
        // A message stored after the server answered may be here already: past the answer is caught up too.
        ok = await passed(answer.last, until);
        // The server answers but the reader does not move: its consumer is gone; make it again.
        if (!ok) await live?.stop();
      }
      if (!ok) lost = true;
      else {
        // Contact is proven by JetStream answering, which comes after the reconnect (a restarted
        // server recovers its streams first): the first proof after either counts as regaining it.
        const reconnected = context.reconnectedAt();
        if (lost || (reconnected !== undefined && reconnected > lastProof)) regained = Date.now();
        lost = false;
        lastProof = Date.now();
      }
      return ok;
    },
    regainedAt: () => regained,
    async stop() {
      await supervisor.stop();
      for (const wake of [...waiters]) wake();
    },
  };
}
