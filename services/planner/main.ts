import type { Bus } from '../../shared/bus/bus.ts';
import { natsAuthOrExit } from '../../shared/bus/natsAuth.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { systemClock } from '../../shared/clock.ts';
import { loadConfigOrExit, opsHost } from '../../shared/config.ts';
import { grpcCredentialsOrExit } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { collectProcessMetrics, renderMetrics } from '../../shared/metrics.ts';
import { startOpsServer } from '../../shared/opsServer.ts';
import { watchStore } from '../../shared/eventStore/watchStore.ts';
import { migrateStoreOrExit, openStore } from '../../shared/openStore.ts';
import { createReadiness } from '../../shared/readiness.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { startPlannerService } from './service.ts';

/** The planner on its own (distributed mode): event store from the config, NATS JetStream, PlannerService on gRPC. */
const config = loadConfigOrExit();
if (!config.NATS_URL) {
  process.stderr.write('config error: NATS_URL: required to run the planner on its own (e.g. nats://127.0.0.1:4222); embedded mode (npm start) needs none\n');
  process.exit(1);
}
const log = createLogger('planner', {}, config.LOG_LEVEL);
const credentials = grpcCredentialsOrExit(config, 'service', log);
await migrateStoreOrExit(config, log);
const store = await openStore(config);
const readiness = createReadiness(log);
const unwatchStore = watchStore(store, readiness);
let bus: Bus;
try {
  bus = await connectNatsBus(config.NATS_URL, { name: 'tock-planner', readiness, log, auth: natsAuthOrExit(config, 'planner') });
} catch (error) {
  process.stderr.write(`planner: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
const server = await startPlannerService({ store, bus, readiness, clock: systemClock, log, address: `${config.GRPC_HOST}:${config.PLANNER_GRPC_PORT}`, credentials, leadMs: config.TOCK_DISPATCH_LEAD_MS });
collectProcessMetrics();
const ops = await startOpsServer({ host: opsHost(config, 'distributed'), port: config.OPS_PORT, ready: () => readiness.ready(), metrics: () => renderMetrics(), log });
onShutdown(log, async () => {
  await ops.stop();
  await server.stop();
  unwatchStore();
  await bus.close();
  await store.close();
});
