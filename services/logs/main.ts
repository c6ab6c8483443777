import { measuredBus } from '../../shared/bus/measuredBus.ts';
import { natsAuthOrExit } from '../../shared/bus/natsAuth.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { loadConfigOrExit, opsHost } from '../../shared/config.ts';
import { grpcCredentialsOrExit } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { collectProcessMetrics, renderMetrics } from '../../shared/metrics.ts';
import { createReadiness } from '../../shared/readiness.ts';
import { logsStoreChoice } from '../../shared/openStore.ts';
import { startOpsServer } from '../../shared/opsServer.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { startLogsService } from './service.ts';

// Distributed mode: the logs service on its own, reading executions from NATS.
const config = loadConfigOrExit();
const log = createLogger('logs', {}, config.LOG_LEVEL);
if (!config.NATS_URL) {
  process.stderr.write('config error: NATS_URL: required to run the logs service on its own (e.g. nats://127.0.0.1:4222)\n');
  process.exit(1);
}
const credentials = grpcCredentialsOrExit(config, 'service', log);
const readiness = createReadiness(log);
const bus = await connectNatsBus(config.NATS_URL, { name: 'tock-logs', readiness, log, auth: natsAuthOrExit(config, 'logs') }).then(measuredBus, (error: unknown) => {
  process.stderr.write(`logs: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
const db = logsStoreChoice(config);
const service = await startLogsService({ bus, ...(db.kind === 'postgres' ? { dbUrl: db.url } : { dbPath: db.path }), log, readiness, address: `${config.GRPC_HOST}:${config.LOGS_GRPC_PORT}`, credentials }).catch(
  async (error: unknown) => {
    log.error('logs service failed to start', { error });
    await bus.close().catch(() => undefined);
    process.exit(1);
  },
);
collectProcessMetrics();
const ops = await startOpsServer({ host: opsHost(config, 'distributed'), port: config.OPS_PORT, ready: () => readiness.ready(), metrics: () => renderMetrics(), log });
onShutdown(log, async () => {
  await ops.stop();
  await service.stop();
  await bus.close();
});
