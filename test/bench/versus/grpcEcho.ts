// The API bench's second yardstick: what one gRPC call costs on this machine before Tock does
// anything in it. A bare grpc-js unary echo (a cron job record's size, no serialization of ours),
// client and server in one process over loopback as embedded Tock's gateway and services are.
// Prints one JSON line: calls per second and CPU per call (client and server together).
import * as grpc from '@grpc/grpc-js';

const SECONDS = Number(process.argv[2] ?? 5);
const IN_FLIGHT = Number(process.argv[3] ?? 32);
const pass = (b: Buffer) => b;
const echo = { path: '/bench.Echo/Echo', requestStream: false, responseStream: false, requestSerialize: pass, requestDeserialize: pass, responseSerialize: pass, responseDeserialize: pass };
const definition = { echo } as grpc.ServiceDefinition;

const server = new grpc.Server();
server.addService(definition, { echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => done(null, call.request) });
const port = await new Promise<number>((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))),
);
const Client = grpc.makeGenericClientConstructor(definition, 'Echo');
const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
const record = Buffer.alloc(600, 1);
const call = () =>
  new Promise<void>((resolve, reject) =>
    (client as unknown as Record<string, (r: Buffer, m: grpc.Metadata, cb: (e: Error | null) => void) => void>).echo!(record, new grpc.Metadata(), (e) => (e ? reject(e) : resolve())),
  );

for (let i = 0; i < 2000; i++) await call();
let calls = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const end = t0 + SECONDS * 1000;
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    while (performance.now() < end) {
      await call();
      calls++;
    }
  }),
);
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ perSecond: calls / ((performance.now() - t0) / 1000), cpuUsPerCall: (cpu.user + cpu.system) / calls }));
client.close();
server.forceShutdown();
