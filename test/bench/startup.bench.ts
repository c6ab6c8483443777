// What a Tock process costs before it does anything: the CPU (user + system) each compiled service
// spends until its ready line, and the CLI's operator commands run to completion on an empty
// DATA_DIR. Module loading is most of it, and the test suite and every restart pay it again.
// Runs the compiled build (`npm run build` first); needs NATS (NATS_URL, else 127.0.0.1:4222) like the services.
// Rounds alternate between the processes so load from elsewhere falls on all alike; the median
// of the rounds is printed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { currentBuild, NODE_FLAGS } from '../support/build.ts';
import { distributedEnv, freePort, SERVICE_READY } from '../support/processes.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Clock ticks of /proc/<pid>/stat: USER_HZ, 100 on Linux.
const TICK_MS = 10;
const SERVICES = Object.keys(SERVICE_READY) as (keyof typeof SERVICE_READY)[];
const CLI = [
  ['channels', 'list', '--account', '1'],
  ['accounts', 'list'],
];

const STORE_SETTINGS = ['ADMIN_ADDR', 'NOTIFIER_ADDR', 'EVENTSTORE_URL', 'ESDB_URL', 'LOGS_DB_URL'];

const dist = currentBuild();
if (!dist) {
  // The TypeScript sources through tsx would measure tsx: nothing to say about the build.
  console.log('skipped: no current build in dist/ (npm run build)');
  process.exit(0);
}

/** utime + stime (fields 14 and 15) of /proc/<pid>/stat, in ms; the second field may hold spaces. */
function cpuMs(stat: string, fields: [number, number]): number {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // `rest` starts at field 3.
  return (Number(rest[fields[0] - 3]) + Number(rest[fields[1] - 3])) * TICK_MS;
}

/** Starts a service, waits for its ready line, reads its CPU so far, then stops it. */
async function serviceCpu(name: keyof typeof SERVICE_READY): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-startup-'));
  const env = await distributedEnv(dataDir, {
    NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    // distributedEnv leaves the notifier its default port, which another run on this machine may hold.
    NOTIFIER_GRPC_PORT: String(await freePort()),
  });
  const child = spawn(process.execPath, [...NODE_FLAGS, join(dist!, 'services', name, 'main.js')], {
    env: { ...process.env, LOG_LEVEL: 'info', OPS_PORT: '0', OPS_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    return await new Promise<number>((resolve, reject) => {
      let output = '';
      const onData = (chunk: Buffer) => {
        output += String(chunk);
        if (SERVICE_READY[name].test(output)) {
          child.stdout.off('data', onData);
          child.stderr.off('data', onData);
          resolve(cpuMs(readFileSync(`/proc/${child.pid}/stat`, 'utf8'), [14, 15]));
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready:\n${output}`)));
    });
  } finally {
    await new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGKILL');
    });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A CLI command run to completion: the CPU of the children this process has reaped grows by its own. */
function cliCpu(args: string[]): number {
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-startup-'));
  const reaped = () => cpuMs(readFileSync('/proc/self/stat', 'utf8'), [16, 17]);
  const before = reaped();
  // The operator commands on the event store of DATA_DIR, as on a machine with no services.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !STORE_SETTINGS.includes(key)));
  const result = spawnSync(process.execPath, [join(dist!, 'services/cli/main.js'), ...args], { env: { ...env, DATA_DIR: dataDir }, encoding: 'utf8' });
  const spent = reaped() - before;
  rmSync(dataDir, { recursive: true, force: true });
  if (result.status !== 0) throw new Error(`tock ${args.join(' ')} exited with ${result.status}:\n${result.stderr}`);
  return spent;
}

const samples = new Map<string, number[]>();
const record = (what: string, ms: number) => samples.set(what, [...(samples.get(what) ?? []), ms]);
for (let round = 0; round < ROUNDS; round++) {
  for (const name of SERVICES) record(`${name} to ready`, await serviceCpu(name));
  for (const args of CLI) record(`tock ${args.join(' ')}`, cliCpu(args));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const [load1] = readFileSync('/proc/loadavg', 'utf8').split(' ');
console.log(`CPU ms (user + system), median of ${ROUNDS} rounds; load average ${load1}`);
for (const [what, values] of samples) console.log(`  ${what.padEnd(34)} ${String(median(values)).padStart(5)}   (${values.join(', ')})`);
