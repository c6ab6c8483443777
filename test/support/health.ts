import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

/** A grpc.health.v1 client, as a Kubernetes grpc probe asks: true for SERVING, false for anything else or no answer. */
export function grpcHealthClient(address: string) {
  const Client = grpc.makeGenericClientConstructor(healthService, 'Health');
  const client = new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    check(request: { service: string }, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, reply?: { status: string | number }) => void): void;
  };
  return {
    serving: (service = '', timeoutMs = 1000) =>
      new Promise<boolean>((resolve) =>
        client.check({ service }, { deadline: Date.now() + timeoutMs }, (error, reply) => resolve(!error && (reply?.status === 'SERVING' || reply?.status === 1))),
      ),
    close: () => client.close(),
  };
}

/** GET /readyz as an httpGet probe does: true on 200, false on anything else or no answer. */
export async function httpReady(url: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * Polls named probes every `everyMs` and keeps each one's transitions (time, state), so a test can
 * say that readiness went false during a fault and true again after it.
 */
export function watchProbes(probes: Record<string, () => Promise<boolean>>, everyMs = 250) {
  const history: Record<string, { at: number; ready: boolean }[]> = Object.fromEntries(Object.keys(probes).map((k) => [k, []]));
  let stopped = false;
  const loops = Object.entries(probes).map(async ([name, probe]) => {
    while (!stopped) {
      const ready = await probe();
      const h = history[name];
      if (!h) throw new Error(`no history for probe ${name}`);
      if (h.at(-1)?.ready !== ready) h.push({ at: Date.now(), ready });
      await new Promise((r) => setTimeout(r, everyMs));
    }
  });
  return {
    history,
    /** Whether `name` was unready at some point in [from, to] and ready at `to`'s last look. */
    wentDownAndUp(name: string, from: number, to: number) {
      const h = history[name];
      if (!h) throw new Error(`no health probe named ${name}`);
      const stateAt = (t: number) => [...h].reverse().find((e) => e.at <= t)?.ready ?? false;
      const down = h.some((e) => !e.ready && e.at >= from && e.at <= to) || !stateAt(from);
      return down && (h.at(-1)?.ready ?? false);
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
