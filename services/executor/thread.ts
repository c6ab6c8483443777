// Entry of embedded mode's executor thread (started through shared/thread/boot.mjs): the same
// executor service as a replica of its own, on a bus served by the main thread over a port.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createPortBus } from '../../shared/bus/portBus.ts';
import { createKeyring, secretBox } from '../../shared/crypto/envelope.ts';
import { systemClock } from '../../shared/clock.ts';
import { createMemoryLeases } from '../../shared/leases/leases.ts';
import type { Logger } from '../../shared/log.ts';
import { metricsSnapshot, type MetricsSnapshot } from '../../shared/metrics.ts';
import { EMBEDDED_TOPOLOGY, ensureTopology } from '../../shared/topology.ts';
import { startExecutorService } from './service.ts';

export interface ExecutorThreadData {
  entry: string;
  busPort: MessagePort;
  allowNetworks: string[];
  serverName?: string;
  publicUrl?: string;
  accountConcurrency?: number;
  /** How long a stop lets calls in flight finish (TOCK_EXECUTOR_DRAIN_SECONDS). */
  drainMs?: number;
  /** The keyring's keys (base64), oldest first: a Map of Buffers does not cross a thread as one. */
  secretKeys?: Array<{ id: string; key: string }>;
}

export type ThreadLog = { t: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> };
/** The thread's metrics, asked for by the main thread at each scrape (`{ t: 'metrics', id }`). */
export type ThreadMetrics = { t: 'metrics'; id: number; snapshot: MetricsSnapshot };

const data = workerData as ExecutorThreadData;
const control = parentPort!;

// The main thread owns the logger (its level, its destination): records cross as they are.
const logger = (base: Record<string, unknown>): Logger => {
  const post = (level: ThreadLog['level']) => (msg: string, fields: Record<string, unknown> = {}) => {
    const record: ThreadLog = { t: 'log', level, msg, fields: { ...base, ...fields } };
    try {
      control.postMessage(record);
    } catch {
      control.postMessage({ ...record, fields: JSON.parse(JSON.stringify(record.fields, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))) as typeof record.fields });
    }
  };
  return { debug: post('debug'), info: post('info'), warn: post('warn'), error: post('error'), child: (fields) => logger({ ...base, ...fields }) };
};

const bus = createPortBus(data.busPort);
// First, so the executor's own ensureTopology finds it done and keeps the embedded limits.
await ensureTopology(bus, EMBEDDED_TOPOLOGY);
// The only executor of an embedded system: `instances` needs no lease shared beyond this thread.
const leases = createMemoryLeases();
const executor = await startExecutorService({
  bus,
  leases,
  clock: systemClock,
  log: logger({}),
  allowNetworks: data.allowNetworks,
  serverName: data.serverName,
  publicUrl: data.publicUrl,
  accountConcurrency: data.accountConcurrency,
  drainMs: data.drainMs,
  secrets: data.secretKeys ? secretBox(createKeyring(data.secretKeys.map((k) => ({ id: k.id, key: Buffer.from(k.key, 'base64') })))) : undefined,
});
const onControl = async (message: { t: string; id?: number }) => {
  if (message.t === 'metrics') {
    const reply: ThreadMetrics = { t: 'metrics', id: message.id!, snapshot: await metricsSnapshot() };
    control.postMessage(reply);
    return;
  }
  if (message.t !== 'stop') return;
  await executor.stop();
  await bus.close();
  control.postMessage({ t: 'stopped' });
};
control.on('message', (message: { t: string; id?: number }) => {
  // A failure here must end the thread loudly, as an uncaught error, not vanish.
  onControl(message).catch((error: unknown) => setImmediate(() => { throw error; }));
});
control.postMessage({ t: 'ready' });
