import { loadConfigOrExit, opsHost } from '../../shared/config.ts';
import { JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import { PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { grpcCredentialsOrExit } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { collectProcessMetrics, renderMetrics } from '../../shared/metrics.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { startGatewayService } from './service.ts';

const config = loadConfigOrExit();
const log = createLogger('gateway', {}, config.LOG_LEVEL);
const credentials = grpcCredentialsOrExit(config, 'service', log);
const clients = {
  jobs: createClient(JobsService, config.JOBS_ADDR ?? `127.0.0.1:${config.JOBS_GRPC_PORT}`, credentials),
  planner: createClient(PlannerService, config.PLANNER_ADDR ?? `127.0.0.1:${config.PLANNER_GRPC_PORT}`, credentials),
  logs: createClient(LogsService, config.LOGS_ADDR ?? `127.0.0.1:${config.LOGS_GRPC_PORT}`, credentials),
  notifier: createClient(NotifierService, config.NOTIFIER_ADDR ?? `127.0.0.1:${config.NOTIFIER_GRPC_PORT}`, credentials),
};
collectProcessMetrics();
const server = await startGatewayService({
  clients,
  rateLimit: config.TOCK_RATE_LIMIT,
  trustProxy: config.TOCK_TRUST_PROXY,
  log,
  host: config.HOST,
  port: config.PORT,
  dashboard: config.TOCK_DASHBOARD === 'on',
  ops: { host: opsHost(config, 'distributed'), port: config.OPS_PORT, metrics: () => renderMetrics() },
});
onShutdown(log, async () => {
  await server.stop();
  for (const client of Object.values(clients)) client.close();
});
