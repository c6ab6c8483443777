import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { Bus } from '../../shared/bus/bus.ts';
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { createPortBus } from '../../shared/bus/portBus.ts';
import { servePortBus } from '../../shared/bus/portBusServer.ts';
import { MessageChannel } from 'node:worker_threads';
import { busContract } from './busContract.ts';
import { privateNats } from '../support/natsServer.ts';


busContract('in-process', async () => {
  const bus = createInProcessBus();
  return { bus, close: () => bus.close() };
});

// Embedded mode's executor thread sees the in-process bus through a MessagePort: same contract.
busContract('in-process, across a MessagePort', async () => {
  const owner = createInProcessBus();
  const { port1, port2 } = new MessageChannel();
  const server = servePortBus(owner, port2);
  const bus = createPortBus(port1);
  return {
    bus,
    async close() {
      await bus.close();
      await server.close();
      await owner.close();
    },
  };
});

// A nats-server of this file's own: the suite deletes every stream it made, on no one else's server.
const nats = await privateNats();
after(() => nats.stop());
busContract('nats', async () => {
  const inner = await connectNatsBus(nats.url, { name: 'tock-bus-contract' });
  const streams = new Set<string>();
  // Streams outlive the connection on a real server: note them so close() can delete them.
  const bus: Bus = {
    ensureStream: (config) => (streams.add(config.name), inner.ensureStream(config)),
    publish: (...args) => inner.publish(...args),
    consume: (...args) => inner.consume(...args),
    notify: (...args) => inner.notify(...args),
    subscribe: (...args) => inner.subscribe(...args),
    watch: (...args) => inner.watch(...args),
    backlog: (...args) => inner.backlog!(...args),
    close: () => inner.close(),
  };
  return {
    bus,
    async close() {
      await inner.close();
      const nc = await connect({ servers: nats.url, name: 'tock-bus-contract-cleanup' });
      try {
        const jsm = await jetstreamManager(nc);
        for (const name of streams) await jsm.streams.delete(name).catch(() => undefined);
      } finally {
        await nc.close();
      }
    },
  };
});
