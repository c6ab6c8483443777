import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import { gated } from '../../shared/grpc/gate.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { addHealthService } from '../../shared/grpc/health.ts';
import type { Logger } from '../../shared/log.ts';
import { watchPlanner } from '../../shared/metrics.ts';
import { createReadiness, type Readiness } from '../../shared/readiness.ts';
import { boundAddress, type ServiceHandle } from '../../shared/service.ts';
import { plannerGrpcImpl } from './grpcServer.ts';
import { Planner } from './planner.ts';

export interface StartPlannerOptions {
  store: EventStore;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** host:port for PlannerService (port 0: any free port). */
  address: string;
  /** Who may call it (none: anyone who reaches the address; only for tests and an explicit insecure flag). */
  credentials?: GrpcCredentials;
  /** Catch-up threshold at start (default 10 s): runs missed by less are published one by one, older ones collapse into one late run per job. */
  misfireMs?: number;
  /** Put runs on the bus this long before they are due (default 0; see PlannerOptions.leadMs). */
  leadMs?: number;
  /** How often the watermark is recorded (default 1 s; see PlannerOptions.watermarkEveryMs). */
  watermarkEveryMs?: number;
  /** The process's readiness (embedded: shared by every service); a new one when absent. */
  readiness?: Readiness;
}

/** The planner service's inner pieces, for tests. */
export interface PlannerParts {
  planner: Planner;
  /** Stops serving and publishing as a crash would: no last watermark, nothing waited for (tests of recovery). */
  crash(): Promise<void>;
}

/**
 * Serves PlannerService (NextRuns, NextRunOf) and the gRPC health service at `address`, then
 * rebuilds the schedule projection, catches up what was missed while down and starts publishing
 * due runs. Until the projection is rebuilt, calls answer UNAVAILABLE and health says NOT_SERVING.
 */
export async function startPlannerService(options: StartPlannerOptions): Promise<ServiceHandle<PlannerParts>> {
  const { log } = options;
  const readiness = options.readiness ?? createReadiness(log);
  const planner = new Planner({ ...options, readiness });
  let started = false;
  const server = createGrpcServer(options.credentials ?? {});
  addService(server, PlannerService, gated(plannerGrpcImpl(planner), () => (started ? null : 'the planner is rebuilding its schedules')), log);
  const unwatchHealth = addHealthService(server, readiness, [PlannerService.typeName]);
  const port = await startServer(server, options.address, options.credentials ?? {});
  try {
    await planner.start();
    started = true;
  } catch (error) {
    unwatchHealth();
    await stopServer(server);
    throw error;
  }
  const unwatchMetrics = watchPlanner(() => planner.stats());
  const address = boundAddress(options.address, port);
  log.info('planner service listening', { address });
  const stop = async (flush: boolean) => {
    unwatchMetrics();
    unwatchHealth();
    await stopServer(server);
    await planner.stop({ flush });
  };
  return {
    addresses: { grpc: address },
    planner,
    readiness,
    stop: () => stop(true),
    crash: () => stop(false),
  };
}
