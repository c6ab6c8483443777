// A recording HTTP target in its own process, so measuring Tock's lateness does not share
// Tock's event loop with the target. GET /__received returns what arrived, as JSON lines.
// A path under /hang/ is recorded and never answered: a target that holds every call to its timeout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const received: string[] = [];
const server = createServer((req, res) => {
  if (req.url === '/__received') {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end(received.join('\n'));
    return;
  }
  const at = Date.now();
  req.resume();
  req.on('end', () => {
    received.push(JSON.stringify({ url: req.url, at, scheduled: req.headers['x-tock-scheduled-time'], runId: req.headers['x-tock-run-id'], userAgent: req.headers['user-agent'] }));
    if (req.url?.startsWith('/hang/')) return;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
