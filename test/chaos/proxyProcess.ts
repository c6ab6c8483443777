// The chaos run's network: one TCP proxy per (service instance, NATS or PostgreSQL) link, in a
// process of its own, driven over IPC. A blocked link forwards nothing either way and connects
// nothing new until healed: each side sees the other go silent, its bytes queue in the kernel and
// its own timeouts decide what happens, as in a partition where packets are dropped. Healing
// resumes every connection still open. Loopback only.
import { connect, createServer, type Server, type Socket } from 'node:net';

interface Link {
  server: Server;
  upstreamPort: number;
  blocked: boolean;
  pairs: Set<[Socket, Socket]>;
  waiting: Set<Socket>;
}

const links = new Map<string, Link>();
const send = (message: unknown) => process.send?.(message);

function forward(from: Socket, to: Socket, link: Link) {
  from.on('data', (chunk) => {
    if (!to.write(chunk)) from.pause();
  });
  to.on('drain', () => {
    if (!link.blocked) from.resume();
  });
}

function join(client: Socket, link: Link) {
  const upstream = connect(link.upstreamPort, '127.0.0.1');
  const pair: [Socket, Socket] = [client, upstream];
  link.pairs.add(pair);
  const close = () => {
    link.pairs.delete(pair);
    client.destroy();
    upstream.destroy();
  };
  for (const s of pair) {
    s.setNoDelay(true);
    s.on('error', close);
    s.on('close', close);
  }
  forward(client, upstream, link);
  forward(upstream, client, link);
  client.resume();
}

function open(name: string, upstreamPort: number) {
  const link: Link = { server: createServer({ pauseOnConnect: true }), upstreamPort, blocked: false, pairs: new Set(), waiting: new Set() };
  link.server.on('connection', (client) => {
    client.on('error', () => client.destroy());
    if (!link.blocked) return join(client, link);
    link.waiting.add(client);
    client.on('close', () => link.waiting.delete(client));
  });
  links.set(name, link);
  link.server.listen(0, '127.0.0.1', () => {
    const address = link.server.address();
    send({ opened: name, port: typeof address === 'object' && address ? address.port : 0 });
  });
}

function block(link: Link) {
  link.blocked = true;
  for (const [a, b] of link.pairs) {
    a.pause();
    b.pause();
  }
}

function heal(link: Link) {
  link.blocked = false;
  for (const [a, b] of link.pairs) {
    a.resume();
    b.resume();
  }
  for (const client of link.waiting) join(client, link);
  link.waiting.clear();
}

process.on('message', (m: { open?: string; upstreamPort?: number; block?: string; heal?: string; id?: number }) => {
  if (m.open !== undefined) return open(m.open, m.upstreamPort!);
  const name = m.block ?? m.heal ?? '';
  const link = links.get(name);
  if (!link) return send({ id: m.id, error: `no link ${name}` });
  if (m.block !== undefined) block(link);
  else heal(link);
  send({ id: m.id, done: true, connections: link.pairs.size });
});
process.on('disconnect', () => process.exit(0));
