import { create, toBinary } from '@bufbuild/protobuf';
import type { Bus, Consumer } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { DerivedKeys } from '../../shared/crypto/derive.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { sealingStore } from '../../shared/eventStore/sealingStore.ts';
import type { Sealer } from '../../shared/job/index.ts';
import { NotificationSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { addHealthService } from '../../shared/grpc/health.ts';
import { createReadiness, type Readiness } from '../../shared/readiness.ts';
import type { Logger } from '../../shared/log.ts';
import { notifications } from '../../shared/metrics.ts';
import { DEFAULT_LEASE_MS, DEFAULT_MERGE_WINDOW_MS, DEFAULT_RETRY, type NotificationDecided, type RetryPolicy } from '../../shared/notify/index.ts';
import { channelSealing } from '../../shared/notify/channelSecrets.ts';
import { boundAddress, type ServiceHandle } from '../../shared/service.ts';
import { ensureTopology, type TopologyOptions } from '../../shared/topology.ts';
import { notificationSubject } from '../../shared/subjects/notifier.ts';
import { createActionLinks } from './actionLinks.ts';
import { createChannelUseCases } from './channelUseCases.ts';
import { createDispatcher } from './dispatcher.ts';
import { consumeExecutions } from './executionConsumer.ts';
import { notifierGrpcImpl } from './grpcServer.ts';
import { NotifierView } from './notifierView.ts';
import { createSnoozeUseCases } from './snoozeUseCases.ts';
import { createSenders, type SmtpSettings } from './senders.ts';

export interface NotifierOptions {
  /** The process's readiness, served by the gRPC health service; a new one when absent. */
  readiness?: Readiness;
  store: EventStore;
  /** Seals channel secrets (URLs, bot tokens, signing secrets) in the store; opened only to send (and to mask). */
  secrets: Sealer;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** host:port for gRPC; port 0 picks one. */
  address: string;
  /** Who may call it (none: anyone who reaches the address; only for tests and an explicit insecure flag). */
  credentials?: GrpcCredentials;
  allowNetworks: string[];
  smtp?: SmtpSettings;
  publicUrl?: string;
  /** Signs the action links of notifications (derived from the secret key for that alone); with publicUrl, messages carry them. */
  linkKeys?: DerivedKeys;
  telegramApi?: string;
  windowMs?: number;
  leaseMs?: number;
  retry?: RetryPolicy;
  random?: () => number;
  topology?: TopologyOptions;
}

const toProtoNotification = (n: NotificationDecided) =>
  create(NotificationSchema, {
    id: n.id,
    accountId: BigInt(n.accountId),
    at: BigInt(n.at),
    channelIds: n.routes.map((r) => BigInt(r.channelId)),
    triggers: n.triggers.map((t) => ({
      jobId: BigInt(t.job.id),
      jobName: t.job.name,
      jobUrl: t.job.url,
      group: BigInt(t.job.group ?? 0),
      kind: t.kind,
      reasons: t.reasons,
      fail: t.fail,
      runId: t.execution.runId,
      time: BigInt(t.execution.time),
      httpStatus: t.execution.httpStatus,
      error: t.execution.error,
      output: t.execution.output,
      downloaded: BigInt(t.execution.downloaded),
      executionTime: t.execution.executionTime,
    })),
  });

/**
 * The store as the notifier uses it: channel secrets sealed on append and opened when a command
 * reads its stream; the view's subscription gets them sealed, so they stay sealed in memory.
 */
const channelStore = (store: EventStore, secrets: Sealer) => sealingStore(store, { channel: channelSealing(secrets) });

/** The notifier's inner pieces, for tests. */
export interface NotifierParts {
  view: NotifierView;
  dispatcher: ReturnType<typeof createDispatcher>;
  channels: ReturnType<typeof createChannelUseCases>;
  snoozes: ReturnType<typeof createSnoozeUseCases>;
}

/**
 * The notifier: rebuilds its view from the event store, consumes execution events, merges and
 * delivers notifications, publishes each decided one on the bus, and serves NotifierService
 * (the channel functions) over gRPC. Any number of replicas may run against one store and bus.
 */
export async function startNotifierService(options: NotifierOptions): Promise<ServiceHandle<NotifierParts>> {
  const { bus, clock, log } = options;
  const store = channelStore(options.store, options.secrets);
  await ensureTopology(bus, options.topology);
  const view = new NotifierView(() => clock.now());
  const started = Date.now();
  const readiness = options.readiness ?? createReadiness(log);
  await view.start(store, { log, readiness });
  log.info('notifier view rebuilt', { ms: Date.now() - started });
  const links = options.publicUrl && options.linkKeys ? createActionLinks({ keys: options.linkKeys, publicUrl: options.publicUrl, store }) : undefined;
  const senders = createSenders({ smtp: options.smtp, allowNetworks: options.allowNetworks, publicUrl: options.publicUrl, telegramApi: options.telegramApi, secrets: options.secrets, links });
  const dispatcher = createDispatcher({
    store,
    view,
    senders,
    clock,
    log,
    windowMs: options.windowMs ?? DEFAULT_MERGE_WINDOW_MS,
    leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
    retry: options.retry ?? DEFAULT_RETRY,
    random: options.random,
    onAttempt: (channel, outcome) => notifications.inc({ channel, outcome }),
    onDecided: async (n) => {
      const kind = n.triggers[0]?.kind ?? 'failed';
      await bus.publish(notificationSubject(n.accountId, kind), toBinary(NotificationSchema, toProtoNotification(n)), { msgId: n.id });
    },
  });
  const channels = createChannelUseCases(store, view, clock, senders, options.secrets);
  const snoozes = createSnoozeUseCases(store, view, clock);
  const server = createGrpcServer(options.credentials ?? {});
  let consumer: Consumer | undefined;
  try {
    consumer = await consumeExecutions(bus, store, view, clock, log);
    addService(server, NotifierService, notifierGrpcImpl(channels, snoozes, links, () => clock.now()), log);
    const unwatch = addHealthService(server, readiness, [NotifierService.typeName]);
    const address = boundAddress(options.address, await startServer(server, options.address, options.credentials ?? {}));
    log.info('notifier listening', { address });
    void dispatcher.tick();
    return {
      addresses: { grpc: address },
      readiness,
      view,
      dispatcher,
      channels,
      snoozes,
      async stop() {
        await consumer?.stop();
        await dispatcher.stop();
        unwatch();
        await stopServer(server);
        await view.stop();
        await senders.close();
      },
    };
  } catch (error) {
    await consumer?.stop().catch(() => undefined);
    server.forceShutdown();
    await view.stop();
    await senders.close();
    throw error;
  }
}

/**
 * The notifier's channel (and snooze) functions alone, over a store (the CLI when no notifier
 * runs): no bus, no deliveries.
 */
export async function startChannelsService(
  options: Pick<NotifierOptions, 'store' | 'secrets' | 'clock' | 'log' | 'address' | 'credentials' | 'allowNetworks' | 'smtp' | 'publicUrl' | 'telegramApi' | 'readiness'>,
): Promise<ServiceHandle> {
  const store = channelStore(options.store, options.secrets);
  const view = new NotifierView(() => options.clock.now());
  const readiness = options.readiness ?? createReadiness(options.log);
  await view.start(store, { log: options.log, readiness });
  const senders = createSenders(options);
  const server = createGrpcServer(options.credentials ?? {});
  const impl = notifierGrpcImpl(createChannelUseCases(store, view, options.clock, senders, options.secrets), createSnoozeUseCases(store, view, options.clock));
  addService(server, NotifierService, impl, options.log);
  const address = boundAddress(options.address, await startServer(server, options.address, options.credentials ?? {}));
  return {
    addresses: { grpc: address },
    readiness,
    async stop() {
      await stopServer(server);
      await view.stop();
      await senders.close();
    },
  };
}
