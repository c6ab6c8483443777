import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../shared/clock.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger, type Logger } from '../../shared/log.ts';
import { startEmbedded } from '../../services/embedded/system.ts';
import { portOf } from '../../shared/service.ts';
import { apiClient } from './api.ts';

export const TEST_TOKEN = 'TestToken0123456789abcdefghijklm';

/**
 * Starts the embedded system on a temp data dir and port 0 (the operations port too: tests run in
 * parallel), with a known first token and no rate limit. Its log goes nowhere unless `log` is given.
 */
export async function startTestSystem(options: { dataDir?: string; env?: Record<string, string>; clock?: Clock; misfireMs?: number; log?: Logger } = {}) {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tock-test-'));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', TOCK_BOOTSTRAP_TOKEN: TEST_TOKEN, TOCK_RATE_LIMIT: '0', LOG_LEVEL: 'silent', OPS_PORT: '0', ...options.env });
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
