/**
 * What lies outside the cluster in the deployment test: an HTTP target the jobs call and a webhook
 * receiver for notifications, each a container on the "internet" network (INTERNET in cluster.ts)
 * that prints every request it gets as one JSON line (read back with podman logs).
 */
import { INTERNET } from './cluster.ts';
import { podman } from './podman.ts';

/** The server: /fail answers 500, /slow after 2 s (calls in flight when an executor stops), everything else 200 at once; each request is logged as JSON on arrival. */
const SERVER = `
const http = require('node:http');
http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    console.log(JSON.stringify({ at: Date.now(), method: req.method, url: req.url, headers: req.headers, body }));
    res.statusCode = req.url.startsWith('/fail') ? 500 : 200;
    setTimeout(() => res.end('ok'), req.url.startsWith('/slow') ? 2000 : 0);
  });
}).listen(8080, '0.0.0.0');
`;

export interface Received {
  at: number;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface Peer {
  name: string;
  url: string;
  received(): Promise<Received[]>;
}

export async function startPeer(name: string, host: number, nodeImage: string): Promise<Peer> {
  const ip = `${INTERNET.prefix}${host}`;
  await podman(['run', '-d', '--name', name, '--network', INTERNET.name, '--ip', ip, '--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096:4096', nodeImage, 'node', '-e', SERVER]);
  const url = `http://${ip}:8080`;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${url}/ready`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    name,
    url,
    received: async () =>
      (await podman(['logs', name]))
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Received)
        .filter((r) => r.url !== '/ready'),
  };
}
