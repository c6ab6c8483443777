import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { CONSUMERS } from '../../shared/topology.ts';
import { waitFor } from './waitFor.ts';

/**
 * Resolves once the executors' durable on the due-runs stream holds nothing: no run left to
 * deliver and none delivered but unacknowledged. After it (and with no job left to plan), no run
 * can reach a target again, not even a redelivered duplicate: the barrier to read the target's
 * record at, instead of a fixed wait for a duplicate that would come right behind.
 */
export async function runsDrained(natsUrl: string, timeoutMs = 30_000) {
  const { stream, durable } = CONSUMERS.executors;
  const nc = await connect({ servers: natsUrl, name: 'tock-test-drain' });
  try {
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => {
      const info = await jsm.consumers.info(stream, durable);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    }, `the ${stream} stream's ${durable} drained`, timeoutMs);
  } finally {
    await nc.close();
  }
}
