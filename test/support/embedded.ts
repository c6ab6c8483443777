import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../shared/clock.ts';
import { streamName } from '../../shared/eventStore/eventStore.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger, type Logger } from '../../shared/log.ts';
import { startEmbedded } from '../../services/embedded/system.ts';
import { portOf } from '../../shared/service.ts';
import { apiClient } from './api.ts';
import { waitFor } from './waitFor.ts';

export const TEST_TOKEN = 'TestToken0123456789abcdefghijklm';

/**
 * Starts the embedded system on a temp data dir and port 0 (the operations port too: tests run in
 * parallel), with a known first token and no rate limit. Its log goes nowhere unless `log` is given.
 * The executor runs on the main thread unless `env` asks for TOCK_EXECUTOR_THREAD=on: a thread
 * boots a second copy of the modules, over a second of CPU per system, and most files' subject is
 * not where the executor runs. The files about the run path as deployed (executorThread, onTime,
 * execution, secretsAtRest, metrics) ask for the thread.
 */
export async function startTestSystem(options: { dataDir?: string; env?: Record<string, string>; clock?: Clock; misfireMs?: number; log?: Logger } = {}) {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tock-test-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', TOCK_BOOTSTRAP_TOKEN: TEST_TOKEN, TOCK_RATE_LIMIT: '0', LOG_LEVEL: 'silent', OPS_PORT: '0', TOCK_EXECUTOR_THREAD: 'off', ...options.env });
  const system = await startEmbedded({ config, clock: options.clock, misfireMs: options.misfireMs, log: options.log ?? createLogger('test', {}, 'silent'), print: () => {} });
  const baseUrl = `http://127.0.0.1:${system.port}`;
  return {
    ...system,
    dataDir,
    baseUrl,
    /** The operations port: /metrics, /healthz, /readyz. */
    opsUrl: `http://127.0.0.1:${portOf(system.addresses.ops)}`,
    api: apiClient(baseUrl, TEST_TOKEN),
    async destroy() {
      await system.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Resolves once the system's planner has applied the job's last change (and so has told the
 * executors to drop the runs it had put out ahead): the barrier before a fake clock moves past a
 * change whose effect on the next occurrence is under test. Nothing in the API shows it for every
 * change (an edited URL leaves cron_next as it was), so it reads the planner's projection.
 */
export async function plannerApplied(system: Pick<Awaited<ReturnType<typeof startTestSystem>>, 'store' | 'planner'>, jobId: number) {
  const [last] = await system.store.readStream(streamName('cronjob', jobId), { direction: 'backwards', maxCount: 1 });
  if (!last) throw new Error(`job ${jobId} has no events`);
  await waitFor(() => system.planner.planner.projection.position >= last.position, `the planner to apply job ${jobId}'s last change`);
}
