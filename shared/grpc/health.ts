import type * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Readiness } from '../readiness.ts';

/** The health service name that is SERVING as long as the process answers at all. */
export const LIVENESS = 'liveness';

/**
 * Serves the standard gRPC health protocol (grpc.health.v1: Check and Watch) on `server`, for the
 * whole server ('') and each named service, SERVING exactly while `readiness` says ready,
 * plus `liveness`, always SERVING. This is
 * what Kubernetes' `grpc` probes and grpc_health_probe ask.
 */
export function addHealthService(server: grpc.Server, readiness: Readiness, serviceNames: string[]): () => void {
  const health = new HealthImplementation();
  const names = ['', ...serviceNames];
  const publish = (ready: boolean) => {
    for (const name of names) health.setStatus(name, ready ? 'SERVING' : 'NOT_SERVING');
  };
  // For liveness probes: answers while the process does, so an outage makes it unready, never restarted.
  health.setStatus(LIVENESS, 'SERVING');
  publish(readiness.ready());
  health.addToServer(server);
  return readiness.onChange(publish);
}
