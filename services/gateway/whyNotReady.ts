import { isAppError } from '../../shared/errors.ts';
import type { Readiness } from '../../shared/readiness.ts';
import type { Clients } from './functions.ts';

/**
 * Why the gateway cannot serve the API now, or undefined when it can: what `/readyz` answers on
 * the public port and on the operations port alike. Embedded mode passes the process's
 * readiness (every service's conditions); then the jobs service must take the gateway's calls.
 */
export async function whyNotReady(clients: Pick<Clients, 'jobs'>, readiness?: Readiness): Promise<string | undefined> {
  if (readiness && !readiness.ready()) {
    return Object.entries(readiness.failing())
      .map(([name, why]) => `${name}: ${why}`)
      .join('; ');
  }
  // Account 0 never exists: any answer of the service's own (not a failure to reach it, nor
  // our credential refused) proves the jobs service is up and takes our calls.
  const answered = await clients.jobs.getAccount({ id: 0n }).then(
    () => true,
    (error: unknown) => isAppError(error) && error.kind !== 'INTERNAL' && error.kind !== 'UNAVAILABLE',
  );
  return answered ? undefined : 'jobs service unreachable';
}
