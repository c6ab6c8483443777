import { hostname } from 'node:os';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { DEFAULT_ACCOUNT_CONCURRENCY } from '../../shared/config.ts';
import type { Sealer } from '../../shared/job/index.ts';
import type { Leases } from '../../shared/leases/leases.ts';
import type { Logger } from '../../shared/log.ts';
import { createReadiness, type Readiness } from '../../shared/readiness.ts';
import type { ServiceHandle } from '../../shared/service.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { startExecutor } from './executor.ts';
import { createHttpCaller } from './httpCall.ts';

export interface ExecutorServiceOptions {
  bus: Bus;
  leases: Leases;
  clock: Clock;
  log: Logger;
  allowNetworks: string[];
  serverName?: string;
  publicUrl?: string;
  /** Calls in flight per account (TOCK_ACCOUNT_CONCURRENCY; 0: no limit). */
  accountConcurrency?: number;
  /** Opens the job secrets due runs carry sealed (shared/crypto/envelope). */
  secrets?: Sealer;
  /** The process's readiness; the `executor` condition holds while it consumes due runs. */
  readiness?: Readiness;
  /** How long stop() lets calls in flight finish before handing them back (TOCK_EXECUTOR_DRAIN_SECONDS); absent: no limit. */
  drainMs?: number;
}

/**
 * An executor replica: one shared HTTP client (keep-alive, egress guard) consuming due runs. It
 * serves nothing (no addresses): the planner reaches it through the bus alone.
 */
export async function startExecutorService(options: ExecutorServiceOptions): Promise<ServiceHandle<object, never>> {
  const readiness = options.readiness ?? createReadiness(options.log);
  await ensureTopology(options.bus);
  const caller = createHttpCaller({ allowNetworks: options.allowNetworks });
  const userAgent = `Mozilla/5.0 (compatible; Tock/1.0; +${options.publicUrl ?? 'https://github.com/tock-cron/tock'})`;
  const serverName = options.serverName ?? hostname();
  const consumer = await startExecutor({ ...options, caller, serverName, userAgent, accountConcurrency: options.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY });
  options.log.info('executor consuming due runs', { server: serverName, allowNetworks: options.allowNetworks });
  readiness.set('executor', true);
  return {
    addresses: {},
    readiness,
    async stop() {
      readiness.clear('executor');
      await consumer.stop();
      await caller.close();
    },
  };
}
