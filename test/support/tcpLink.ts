import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP link to a loopback port that a test can cut: blocked, it forwards nothing either way and
 * connects nothing new (each side sees the other go silent, as in a partition that drops packets);
 * healed, every connection still open resumes. test/chaos/proxyProcess.ts does the same for the
 * chaos run from a process of its own.
 */
export async function tcpLink(upstreamPort: number) {
  let blocked = false;
  const pairs = new Set<[Socket, Socket]>();
  const waiting = new Set<Socket>();
  const join = (client: Socket) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const [from, to] of [pair, [upstream, client] as const]) {
      from.on('error', close).on('close', close);
      from.on('data', (chunk) => to.write(chunk));
    }
    client.resume();
  };
  const server = createServer({ pauseOnConnect: true }, (client) => {
    client.on('error', () => client.destroy());
    if (!blocked) return join(client);
    waiting.add(client);
    client.on('close', () => waiting.delete(client));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    block() {
      blocked = true;
      for (const [a, b] of pairs) (a.pause(), b.pause());
    },
    heal() {
      blocked = false;
      for (const [a, b] of pairs) (a.resume(), b.resume());
      for (const client of waiting) join(client);
      waiting.clear();
    },
    async close() {
      for (const [a, b] of pairs) (a.destroy(), b.destroy());
      for (const client of waiting) client.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
