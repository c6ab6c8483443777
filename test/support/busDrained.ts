import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Bus } from '../../shared/bus/bus.ts';
import { CONSUMERS } from '../../shared/topology.ts';
import { waitFor } from './waitFor.ts';

/**
 * Resolves once the executors' durable on the due-runs stream holds nothing: no run left to
 * deliver and none delivered but unacknowledged. After it (and with no job left to plan), no run
 * can reach a target again, not even a redelivered duplicate: the barrier to read the target's
 * record at, instead of a fixed wait for a duplicate that would come right behind. Given a URL it
 * connects without a user; on a server with users, pass a connection allowed to read the
 * consumer (the executor's), which stays open.
 */
export async function runsDrained(nats: string | NatsConnection, timeoutMs = 30_000) {
  const { stream, durable } = CONSUMERS.executors;
  const nc = typeof nats === 'string' ? await connect({ servers: nats, name: 'tock-test-drain' }) : nats;
  try {
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => {
      const info = await jsm.consumers.info(stream, durable);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    }, `the ${stream} stream's ${durable} drained`, timeoutMs);
  } finally {
    if (nc !== nats) await nc.close();
  }
}

/**
 * The same barrier as a check, on any bus (the embedded system's in-process bus too), for
 * `waitFor` or, on a fake clock, `drive`: whether a durable holds nothing to deliver and nothing
 * delivered but unacknowledged. On the executors' durable a run waiting for its instant (a retry
 * waiting out its backoff) counts as held, so a drive until drained runs it, or drops it.
 */
export async function drained(bus: Bus, consumer: { stream: string; durable: string }): Promise<boolean> {
  const backlog = await bus.backlog?.(consumer.stream, consumer.durable);
  if (!backlog) throw new Error(`the bus reports no backlog for ${consumer.stream}/${consumer.durable}`);
  return backlog.pending === 0 && backlog.ackPending === 0;
}
