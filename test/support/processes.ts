import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { GrpcCredentials } from '../../shared/grpc/grpcAuth.ts';
import { randomToken } from '../../shared/grpc/grpcAuth.ts';
import { serviceCommand } from './build.ts';

const handedOut = new Set<number>();

/**
 * A free loopback port for a process the test starts (bound, then released). Taken below the
 * kernel's ephemeral range (32768 and up on Linux): a port from that range, once released, can be
 * given to the next bind to port 0 (a service's own ops server, an outgoing connection) before the
 * process it was meant for binds it, and that process then fails with EADDRINUSE (seen in CI).
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
    handedOut.delete(port);
  }
}

/** The log line each service prints once it serves (what startService waits for). */
export const SERVICE_READY: Record<'jobs' | 'planner' | 'executor' | 'logs' | 'notifier' | 'gateway', RegExp> = {
  jobs: /jobs service listening/,
  planner: /planner service listening/,
  executor: /executor consuming due runs/,
  logs: /logs service listening/,
  notifier: /notifier listening/,
  gateway: /gateway listening/,
};

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  output: string[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs `services/<name>/main` as its own process (see serviceCommand); resolves once its log says `ready`. */
export function startService(name: string, env: Record<string, string>, ready: RegExp, timeoutMs = 30_000): Promise<ServiceProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, serviceCommand(name), {
      // Ops ports on any free port: several services share this machine.
      env: { ...process.env, LOG_LEVEL: 'info', OPS_PORT: '0', OPS_HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    const proc: ServiceProcess = {
      name,
      child,
      output,
      kill: (signal = 'SIGTERM') =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill(signal);
        }),
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not become ready in ${timeoutMs} ms:\n${output.join('')}`));
    }, timeoutMs);
    let started = false;
    const onData = (chunk: Buffer) => {
      output.push(String(chunk));
      // Only until ready: joining all output on every chunk is quadratic, and a chatty service
      // (thousands of warnings during an outage) would stall this process, then every child
      // blocked writing its logs to a pipe no one drains.
      if (!started && ready.test(output.join(''))) {
        started = true;
        clearTimeout(timer);
        resolve(proc);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready:\n${output.join('')}`));
    });
  });
}

/**
 * Waits for services started at once; each that came up joins `procs` (so the caller's cleanup
 * stops it) before the first failure, if any, is thrown.
 */
export async function startedTogether(procs: ServiceProcess[], starting: Promise<ServiceProcess>[]): Promise<void> {
  const started = await Promise.allSettled(starting);
  for (const s of started) if (s.status === 'fulfilled') procs.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
}

/** Runs the operator CLI to completion and returns its output. */
export function runCli(args: string[], env: Record<string, string>, cwd = process.cwd()): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/tock.js', ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    // 'close', not 'exit': at 'exit' the child's output may still be unread in its pipes.
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A fixed key for job secrets in tests (32 bytes, base64); never a deployment's. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');
/** The settings distributedEnv always sets (tests read them back), and whatever else a test adds. */
export type DistributedEnv = Record<string, string> &
  Record<'DATA_DIR' | 'JOBS_GRPC_PORT' | 'PLANNER_GRPC_PORT' | 'LOGS_GRPC_PORT' | 'JOBS_ADDR' | 'PLANNER_ADDR' | 'LOGS_ADDR' | 'PORT', string> &
  Record<'TOCK_GRPC_TOKEN' | 'TOCK_ADMIN_TOKEN' | 'ADMIN_GRPC_PORT' | 'ADMIN_ADDR', string>;

/**
 * The environment of a distributed deployment on loopback: free ports, each service findable by
 * the others, gRPC authenticated by fresh service and admin tokens (as a deployment must be).
 */
export async function distributedEnv(dataDir: string, extra: Record<string, string> = {}): Promise<DistributedEnv> {
  const [jobsPort, plannerPort, logsPort, httpPort, adminPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  return {
    TOCK_GRPC_TOKEN: randomToken(),
    TOCK_ADMIN_TOKEN: randomToken(),
    ADMIN_GRPC_PORT: String(adminPort),
    ADMIN_ADDR: `127.0.0.1:${adminPort}`,
    DATA_DIR: dataDir,
    JOBS_GRPC_PORT: String(jobsPort),
    PLANNER_GRPC_PORT: String(plannerPort),
    LOGS_GRPC_PORT: String(logsPort),
    JOBS_ADDR: `127.0.0.1:${jobsPort}`,
    PLANNER_ADDR: `127.0.0.1:${plannerPort}`,
    LOGS_ADDR: `127.0.0.1:${logsPort}`,
    PORT: String(httpPort),
    HOST: '127.0.0.1',
    TOCK_RATE_LIMIT: '0',
    // The jobs service and executors refuse to start without the key that seals job secrets.
    TOCK_SECRET_KEY: TEST_SECRET_KEY,
    ...extra,
  };
}

/** What a test's own gRPC client presents to the services of `env` (the gateway's identity, or the operator's). */
export function credentialsOf(env: Record<string, string>, identity: 'service' | 'admin' = 'service'): GrpcCredentials {
  const token = identity === 'admin' ? env.TOCK_ADMIN_TOKEN : env.TOCK_GRPC_TOKEN;
  return { token: token || undefined };
}
