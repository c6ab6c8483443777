
import type { Bus } from '../../shared/bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import { addService, createGrpcServer, startServer, stopServer } from '../../shared/grpc/bridge.ts';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import type { Logger } from '../../shared/log.ts';
import { watchPlanner } from '../../shared/metrics.ts';
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
}

/**
 * Rebuilds the schedule projection, catches up what was missed while down, starts publishing due
 * runs, then serves PlannerService (NextRuns, NextRunOf) over gRPC at `address`.
 */
export async function startPlanner(options: StartPlannerOptions) {
  const { log } = options;
  const planner = new Planner(options);
  await planner.start();
  const unwatch = watchPlanner(() => planner.stats());
  const server = createGrpcServer(options.credentials ?? {});
  addService(server, PlannerService, plannerGrpcImpl(planner), log);
  let port: number;
  try {
    port = await startServer(server, options.address, options.credentials ?? {});
  } catch (error) {
    unwatch();
    await planner.stop();
    throw error;
  }
  const host = options.address.slice(0, options.address.lastIndexOf(':'));
  log.info('planner service listening', { address: `${host}:${port}` });
  return {
    address: `${host}:${port}`,
    planner,
    /** Stops serving and publishing; `flush: false` stops like a crash (tests). */
    async stop(stopOptions: { flush?: boolean } = {}) {
      unwatch();
      await stopServer(server);
      await planner.stop(stopOptions);
    },
  };
}
