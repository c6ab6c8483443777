// The sink every contender calls, in a process of its own: it reads the scheduled instant from
// the URL (`?s=<ms>`, Tock writes it with __timestamp_ms__) and keeps only what the figures need,
// so 10,000 calls a second for 30 s cost it little memory. GET /__stats?from=&to= sums up the
// calls scheduled in [from, to) ms; POST /__reset forgets them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let seen = new Map<string, number>();
let lateness: number[] = [];

const server = createServer((req, res) => {
  const url = req.url ?? '';
  if (url.startsWith('/__stats')) {
    const q = new URL(url, 'http://sink').searchParams;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats(Number(q.get('from')), Number(q.get('to')))));
    return;
  }
  if (url === '/__reset') {
    seen = new Map();
    lateness = [];
    res.end();
    return;
  }
  const at = Date.now();
  const mark = url.lastIndexOf('s=');
  const scheduled = mark < 0 ? NaN : Number(url.slice(mark + 2));
  if (Number.isFinite(scheduled)) {
    seen.set(url, (seen.get(url) ?? 0) + 1);
    lateness.push(scheduled, at - scheduled);
  }
  req.resume();
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('ok');
});

function stats(from: number, to: number) {
  const late: number[] = [];
  for (let i = 0; i < lateness.length; i += 2) if (lateness[i]! >= from && lateness[i]! < to) late.push(lateness[i + 1]!);
  let distinct = 0;
  let doubled = 0;
  for (const [url, n] of seen) {
    const s = Number(url.slice(url.lastIndexOf('s=') + 2));
    if (s < from || s >= to) continue;
    distinct++;
    if (n > 1) doubled++;
  }
  late.sort((a, b) => a - b);
  const q = (p: number) => late[Math.min(late.length - 1, Math.floor(p * late.length))] ?? NaN;
  return { calls: late.length, distinct, doubled, p50: q(0.5), p99: q(0.99), max: late.at(-1) ?? NaN };
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
