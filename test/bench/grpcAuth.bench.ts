// What authenticating every gRPC call costs: the same unary call (LogsService.logs on an empty
// read model) over loopback with no credential, with the token (interceptor, SHA-256 and a
// constant-time compare per call), and with mutual TLS plus the token. Rounds alternate so load
// from elsewhere on the machine falls on all three alike.
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { randomToken, type GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { createLogger } from '../../shared/log.ts';
import { startLogsService } from '../../services/logs/service.ts';
import { readFileSync, rmSync } from 'node:fs';
import { makeTestPki } from '../support/certs.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const CONCURRENCY = 32;
const ROUNDS = 3;
const log = createLogger('bench', {}, 'silent');
const pki = makeTestPki('bench');
const tls = { ca: readFileSync(pki.ca), cert: readFileSync(pki.cert), key: readFileSync(pki.key), serverName: 'localhost' };
const token = randomToken();
const variants: [string, GrpcCredentials][] = [
  ['no credential', {}],
  ['token', { token }],
  ['mutual TLS + token', { tls, token }],
];

const setups = await Promise.all(
  variants.map(async ([name, credentials]) => {
    const service = await startLogsService({ bus: createInProcessBus(), dbPath: ':memory:', log, address: '127.0.0.1:0', credentials });
    const client = createClient(LogsService, service.addresses.grpc, credentials);
    await client.logs({ accountId: 1n, limit: 1 });
    return { name, service, client, rates: [] as number[] };
  }),
);

for (let round = 0; round < ROUNDS; round++) {
  for (const s of setups) {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < CALLS) await s.client.logs({ accountId: 1n, limit: 1 });
      }),
    );
    s.rates.push(CALLS / ((performance.now() - started) / 1000));
  }
}
for (const s of setups) {
  const best = Math.max(...s.rates);
  console.log(`${s.name.padEnd(20)} ${best.toFixed(0).padStart(6)} calls/s (best of ${ROUNDS} rounds of ${CALLS}, ${CONCURRENCY} in flight)`);
  s.client.close();
  await s.service.stop();
}
rmSync(pki.dir, { recursive: true, force: true });
