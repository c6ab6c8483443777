import { MessageChannel, Worker } from 'node:worker_threads';
import type { Bus } from '../../shared/bus/bus.ts';
import { servePortBus } from '../../shared/bus/portBusServer.ts';
import type { Logger } from '../../shared/log.ts';
import type { MetricsSnapshot } from '../../shared/metrics.ts';
import { createReadiness, type Readiness } from '../../shared/readiness.ts';
import type { ServiceHandle } from '../../shared/service.ts';
import type { ExecutorThreadData, ThreadLog, ThreadMetrics } from '../executor/thread.ts';

const BOOT = new URL('../../shared/thread/boot.mjs', import.meta.url);
// Under tsx this module is executorThread.ts and the thread's entry is TypeScript too; compiled to
// dist/ both are .js (boot.mjs registers tsx only for a .ts entry).
const ENTRY = new URL(`../executor/thread.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url).href;
const RESTART_DELAY_MS = 1000;
// A scrape must not hang on a busy or dying thread: without an answer, the thread's part is left out.
const METRICS_TIMEOUT_MS = 2000;

type Options = Omit<ExecutorThreadData, 'entry' | 'busPort'> & { bus: Bus; log: Logger; readiness?: Readiness };

/** The executor thread's own pieces, beside the service handle. */
export interface ExecutorThreadParts {
  /** The current thread's id (a new one after a restart). */
  readonly threadId: number;
  /** The thread's metrics (runs, lateness, target calls), for the main thread's /metrics; undefined if it does not answer. */
  metrics(): Promise<MetricsSnapshot | undefined>;
  /** For tests: the thread dies as if it crashed. */
  kill(): Promise<number>;
}

/**
 * Embedded mode's executor on a worker thread, so HTTP calls and the run path use the second
 * core while the main thread plans, records and answers the API. Runs it held when the thread
 * dies go back to the bus (redelivered, as for a dead replica) and a new thread takes over.
 */
export async function startExecutorThread(options: Options): Promise<ServiceHandle<ExecutorThreadParts, never>> {
  const { bus, log, readiness = createReadiness(log), ...settings } = options;
  let stopping = false;
  let current: Awaited<ReturnType<typeof spawn>>;
  let asked = 0;
  const answers = new Map<number, (snapshot: MetricsSnapshot) => void>();

  async function spawn() {
    const { port1, port2 } = new MessageChannel();
    const server = servePortBus(bus, port2);
    const workerData: ExecutorThreadData = { ...settings, entry: ENTRY, busPort: port1 };
    const worker = new Worker(BOOT, { workerData, transferList: [port1] });
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (m: ThreadLog | ThreadMetrics | { t: 'ready' | 'stopped' }) => {
        if (m.t === 'log') log[m.level](m.msg, m.fields);
        else if (m.t === 'metrics') answers.get(m.id)?.(m.snapshot);
        else if (m.t === 'ready') resolve();
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`executor thread exited with code ${code} while starting`)));
    });
    worker.on('error', (error) => log.error('executor thread failed', { error }));
    worker.once('exit', (code) => {
      void server.close();
      if (stopping) return;
      log.error('executor thread exited; starting another', { code });
      setTimeout(() => {
        if (!stopping) spawn().then((next) => (current = next), (error) => log.error('executor thread restart failed', { error }));
      }, RESTART_DELAY_MS).unref();
    });
    await ready;
    return { worker, server };
  }

  current = await spawn();
  return {
    addresses: {},
    readiness,
    async stop() {
      stopping = true;
      const { worker, server } = current;
      const stopped = new Promise<void>((resolve) => {
        worker.on('message', (m: { t: string }) => m.t === 'stopped' && resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage({ t: 'stop' });
      await stopped;
      await worker.terminate();
      await server.close();
    },
    get threadId() {
      return current.worker.threadId;
    },
    metrics(): Promise<MetricsSnapshot | undefined> {
      const id = ++asked;
      return new Promise((resolve) => {
        const timer = setTimeout(() => done(undefined), METRICS_TIMEOUT_MS);
        const done = (snapshot: MetricsSnapshot | undefined) => {
          clearTimeout(timer);
          answers.delete(id);
          resolve(snapshot);
        };
        answers.set(id, done);
        try {
          current.worker.postMessage({ t: 'metrics', id });
        } catch {
          done(undefined);
        }
      });
    },
    kill: () => current.worker.terminate(),
  };
}
