import type { Logger } from './log.ts';
import type { Readiness } from './readiness.ts';

/** One live run of something supervised: `ended` settles when it stops by itself (error or end). */
export interface SupervisedRun {
  ended: Promise<unknown>;
  stop(): Promise<void>;
}

export interface SuperviseOptions {
  /** Names the condition in the readiness model and the log lines. */
  name: string;
  /** Starts a run; resolves once it is live (caught up). Each call resumes from where the last one stopped. */
  start: () => Promise<SupervisedRun>;
  log: Logger;
  readiness?: Readiness;
  /** First retry delay (default 200 ms); it doubles per failed attempt up to `maxDelayMs` (default 5 s). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

export interface Supervisor {
  /** Resolves on the first successful start (or on stop before one). */
  started: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Keeps a subscription or consumer alive: when a run fails to start, errs or ends, the condition
 * goes false and it is started again after an exponential backoff with full jitter, so replicas
 * that lost the same server do not come back in step. A run that stayed up for a while resets the
 * backoff. Written out rather than taken from a retry library: those retry one call, while this
 * loop also restarts runs that started fine and died later, and must report readiness meanwhile.
 */
export function supervise(options: SuperviseOptions): Supervisor {
  const { name, log, readiness } = options;
  const minDelayMs = options.minDelayMs ?? 200;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  let stopped = false;
  let cancelSleep: (() => void) | null = null;
  let markStopped!: () => void;
  const stopSignal = new Promise<string>((resolve) => (markStopped = () => resolve('stopped')));
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  readiness?.set(name, false, 'starting');

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        cancelSleep = null;
        resolve();
      }
      cancelSleep = done;
    });

  const loop = (async () => {
    let attempt = 0;
    while (!stopped) {
      let run: SupervisedRun;
      try {
        run = await options.start();
      } catch (error) {
        if (stopped) break;
        const delay = backoff(attempt++, minDelayMs, maxDelayMs);
        readiness?.set(name, false, `cannot start: ${messageOf(error)}`);
        log.warn('supervised run failed to start; retrying', { name, attempt, retryInMs: delay, error });
        await sleep(delay);
        continue;
      }
      if (stopped) {
        await run.stop().catch(() => undefined);
        break;
      }
      const upSince = Date.now();
      readiness?.set(name, true);
      markStarted();
      if (attempt > 0) log.info('supervised run recovered', { name, attempts: attempt });
      const why = await Promise.race([
        run.ended.then(
          () => 'ended',
          (error: unknown) => messageOf(error),
        ),
        stopSignal,
      ]);
      await run.stop().catch(() => undefined);
      if (stopped) break;
      if (Date.now() - upSince > maxDelayMs * 2) attempt = 0;
      const delay = backoff(attempt++, minDelayMs, maxDelayMs);
      readiness?.set(name, false, `lost: ${why}`);
      log.warn('supervised run stopped; restarting', { name, why, retryInMs: delay });
      await sleep(delay);
    }
  })();

  return {
    started,
    async stop() {
      stopped = true;
      cancelSleep?.();
      markStarted();
      markStopped();
      await loop;
      readiness?.clear(name);
    },
  };
}

/** Full jitter: a random delay up to the exponential bound, never under the minimum. */
export function backoff(attempt: number, minMs: number, maxMs: number): number {
  const bound = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
  return Math.max(minMs, Math.round(Math.random() * bound));
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
