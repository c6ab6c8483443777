// The chaos run's target, in a process of its own: records every request (path and query, the
// scheduled time and run id headers) and answers 200, or 500 on odd scheduled seconds for a path
// with `/flaky` (failures and recoveries for the notifier to report). GET /__received: JSON lines.
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
    const scheduled = String(req.headers['x-tock-scheduled-time'] ?? '');
    received.push(JSON.stringify({ url: req.url, at, scheduled, runId: req.headers['x-tock-run-id'] ?? '' }));
    const fail = req.url?.includes('/flaky') && Number(scheduled) % 2 === 1;
    res.writeHead(fail ? 500 : 200, { 'content-type': 'text/plain' });
    res.end(fail ? 'failing on odd seconds' : 'ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
