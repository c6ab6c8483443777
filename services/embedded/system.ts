import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { measuredBus } from '../../shared/bus/measuredBus.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import { opsHost, smtpSettings, type Config } from '../../shared/config.ts';
import { AdminService, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import { PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import { createMemoryLeases } from '../../shared/leases/leases.ts';
import { createLogger, type Logger } from '../../shared/log.ts';
import { collectProcessMetrics, renderMetrics } from '../../shared/metrics.ts';
import { watchStore } from '../../shared/eventStore/watchStore.ts';
import { logsStoreChoice, openStore } from '../../shared/openStore.ts';
import { ACTION_LINK_KEYS, deriveKeys } from '../../shared/crypto/derive.ts';
import { exportKeys, secretBox } from '../../shared/crypto/envelope.ts';
import { loadKeyring } from '../../shared/crypto/loadKeyring.ts';
import { createReadiness } from '../../shared/readiness.ts';
import { portOf, type ServiceHandle } from '../../shared/service.ts';
import { EMBEDDED_TOPOLOGY, ensureTopology } from '../../shared/topology.ts';
import { startExecutorService } from '../executor/service.ts';
import { startGatewayService } from '../gateway/service.ts';
import { startJobsService } from '../jobs/service.ts';
import { startLogsService } from '../logs/service.ts';
import { startNotifierService } from '../notifier/service.ts';
import { startPlannerService } from '../planner/service.ts';
import { bootstrapFirstAccount } from './bootstrap.ts';
import { startExecutorThread, type ExecutorThreadParts } from './executorThread.ts';

export interface EmbeddedOptions {
  config: Config;
  clock?: Clock;
  log?: Logger;
  /** Where the first-start token is printed (stdout by default). */
  print?: (line: string) => void;
  /** Planner catch-up threshold (tests). */
  misfireMs?: number;
}

/**
 * Every service in one process: the event store EVENTSTORE_URL names (SQLite under DATA_DIR by
 * default), in-process bus, and the
 * services talking real gRPC over loopback, exactly as they do when deployed apart.
 */
export async function startEmbedded(options: EmbeddedOptions) {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createLogger('tock', {}, config.LOG_LEVEL);
  const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
  const store = await openStore(config);
  // Job and channel secrets are sealed at rest; with no key configured, embedded mode keeps its own in DATA_DIR.
  const keyring = loadKeyring(config, { generateIn: config.DATA_DIR });
  const secrets = secretBox(keyring);
  const bus = measuredBus(createInProcessBus({ clock }));
  await ensureTopology(bus, EMBEDDED_TOPOLOGY);
  collectProcessMetrics();
  const loopback = '127.0.0.1:0';
  // Real gRPC over loopback, still authenticated: another local user cannot call these ports.
  const credentials = loopbackCredentials();
  // One readiness for the process: every service's conditions decide the gateway's /readyz.
  const readiness = createReadiness(log);
  const unwatchStore = watchStore(store, readiness);

  const jobs = await startJobsService({
    store,
    bus,
    readiness,
    clock,
    log: log.child({ component: 'jobs' }),
    address: loopback,
    credentials: credentials.service,
    admin: { address: loopback, credentials: credentials.admin },
    accountJobLimit: config.TOCK_ACCOUNT_JOB_LIMIT,
    secrets,
  });
  const logsDb = logsStoreChoice(config);
  const logs = await startLogsService({
    bus,
    readiness,
    ...(logsDb.kind === 'postgres' ? { dbUrl: logsDb.url } : { dbPath: logsDb.path }),
    log: log.child({ component: 'logs' }),
    address: loopback,
    credentials: credentials.service,
  });
  const planner = await startPlannerService({ store, bus, readiness, clock, log: log.child({ component: 'planner' }), address: loopback, credentials: credentials.service, misfireMs: options.misfireMs, leadMs: config.TOCK_DISPATCH_LEAD_MS });
  const notifier = await startNotifierService({
    store,
    secrets,
    bus,
    clock,
    log: log.child({ component: 'notifier' }),
    address: loopback,
    credentials: credentials.service,
    allowNetworks: config.TOCK_ALLOW_NETWORKS,
    smtp: smtpSettings(config),
    publicUrl: config.TOCK_PUBLIC_URL,
    linkKeys: deriveKeys(keyring, ACTION_LINK_KEYS),
    telegramApi: config.TOCK_TELEGRAM_API,
    windowMs: config.TOCK_NOTIFY_WINDOW_MS,
    retry: { baseMs: config.TOCK_NOTIFY_RETRY_MS, maxMs: 15 * 60_000 },
    topology: EMBEDDED_TOPOLOGY,
  });
  const executorSettings = {
    bus,
    log: log.child({ component: 'executor' }),
    allowNetworks: config.TOCK_ALLOW_NETWORKS,
    serverName: config.TOCK_SERVER_NAME,
    publicUrl: config.TOCK_PUBLIC_URL,
    accountConcurrency: config.TOCK_ACCOUNT_CONCURRENCY,
    drainMs: config.TOCK_EXECUTOR_DRAIN_SECONDS * 1000,
  };
  // A clock given by a test cannot cross into a thread: that executor stays with it.
  const executor: ServiceHandle<Partial<ExecutorThreadParts>, never> =
    config.TOCK_EXECUTOR_THREAD === 'on' && !options.clock
      ? await startExecutorThread({ ...executorSettings, secretKeys: exportKeys(keyring) })
      : await startExecutorService({ ...executorSettings, readiness, secrets, leases: createMemoryLeases(() => clock.now()), clock });
  const clients = {
    jobs: createClient(JobsService, jobs.addresses.grpc, credentials.service),
    planner: createClient(PlannerService, planner.addresses.grpc, credentials.service),
    logs: createClient(LogsService, logs.addresses.grpc, credentials.service),
    notifier: createClient(NotifierService, notifier.addresses.grpc, credentials.service),
  };
  const adminClient = createClient(AdminService, jobs.addresses.admin, credentials.admin);
  const token = await bootstrapFirstAccount(adminClient, { token: config.TOCK_BOOTSTRAP_TOKEN, timezone: config.TOCK_DEFAULT_TIMEZONE }, print);
  const gateway = await startGatewayService({
    clients,
    rateLimit: config.TOCK_RATE_LIMIT,
    trustProxy: config.TOCK_TRUST_PROXY,
    log: log.child({ component: 'gateway' }),
    host: config.HOST,
    port: config.PORT,
    dashboard: config.TOCK_DASHBOARD === 'on',
    readiness,
    // One /metrics for the whole process, the executor thread's runs included, on the operations port only.
    ops: { host: opsHost(config, 'embedded'), port: config.OPS_PORT, metrics: () => renderMetrics(executor.metrics ? [executor.metrics] : []) },
  });
  const addresses = { http: gateway.addresses.http, ops: gateway.addresses.ops! };
  return {
    port: portOf(addresses.http),
    /** host:port of the API (http) and of the operations port (ops: /metrics, /healthz, /readyz). */
    addresses,
    /** The token of a freshly created first account, or null when the store already had one. */
    bootstrapToken: token,
    jobs,
    planner,
    logs,
    notifier,
    executor,
    jobsClient: clients.jobs,
    /** The operator's client (AdminService). */
    adminClient,
    clients,
    store,
    bus,
    readiness,
    async stop() {
      await gateway.stop();
      for (const client of Object.values(clients)) client.close();
      adminClient.close();
      await executor.stop();
      await planner.stop();
      await notifier.stop();
      await logs.stop();
      await jobs.stop();
      unwatchStore();
      await bus.close();
      await store.close();
    },
  };
}
