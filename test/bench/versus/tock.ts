// Tock as `npm start` starts it (embedded, its own process tree), for benches that measure it from
// outside: a data directory of its own, free ports, a bootstrap token, the rate limit off.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../support/processes.ts';

// TOCK_BENCH_ROOT: start the Tock of another checkout (e.g. main, to measure before and after a
// change back to back with the same bench).
const ROOT = process.env.TOCK_BENCH_ROOT ?? join(import.meta.dirname, '../../..');

export interface TockProcess {
  pid: number;
  /** The API's base, e.g. http://127.0.0.1:1234 */
  api: string;
  /** The operations port's base (/healthz, /readyz, /metrics). */
  ops: string;
  token: string;
  /** Posts one API call with the bootstrap token; throws on a refusal. */
  call(fn: string, body: unknown): Promise<unknown>;
  /** The same with another account's token. */
  callAs(token: string, fn: string, body: unknown): Promise<unknown>;
  /** A new account (no job limit), made as an operator makes one: `tock accounts create` on the data directory. Its token. */
  createAccount(name: string): Promise<string>;
  /** The values of `series` (a name, with its labels when it has some) in one read of /metrics; 0 for one absent. */
  metrics(series: string[]): Promise<number[]>;
  stop(): Promise<void>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

export async function stopTree(c: ChildProcess) {
  if (c.exitCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  process.kill(-c.pid!, 'SIGTERM');
  const killed = setTimeout(() => process.kill(-c.pid!, 'SIGKILL'), 15_000);
  await exited;
  clearTimeout(killed);
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** Starts Tock as `npm start` does and resolves once /readyz answers. */
export async function startTock(env: Record<string, string> = {}): Promise<TockProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'tock-vs-'));
  const [port, opsPort] = [await freePort(), await freePort()];
  const token = randomBytes(24).toString('base64').replace(/[^A-Za-z0-9]/g, '').padEnd(32, 'a').slice(0, 32);
  const start = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start as string;
  const c = spawn('sh', ['-c', `exec ${start}`], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dir, PORT: String(port), OPS_PORT: String(opsPort), TOCK_BOOTSTRAP_TOKEN: token, TOCK_RATE_LIMIT: '0', TOCK_ALLOW_NETWORKS: '127.0.0.0/8', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  c.stdout.resume();
  const stop = async () => {
    await stopTree(c);
    rmSync(dir, { recursive: true, force: true });
  };
  const ops = `http://127.0.0.1:${opsPort}`;
  for (let i = 0; ; i++) {
    if (await fetch(`${ops}/readyz`).then((r) => r.ok, () => false)) break;
    if (i > 600 || c.exitCode !== null) throw (await stop(), new Error('Tock did not become ready'));
    await sleep(100);
  }
  const api = `http://127.0.0.1:${port}`;
  const callAs = async (bearer: string, fn: string, body: unknown) => {
    const r = await fetch(`${api}/api/v1/${fn}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${fn}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const call = (fn: string, body: unknown) => callAs(token, fn, body);
  const createAccount = async (name: string) => {
    const cli = await runCli(['accounts', 'create', '--name', name, '--limit', '0', '--json'], { DATA_DIR: dir }, ROOT);
    if (cli.code !== 0) throw new Error(`tock accounts create: ${cli.stderr}`);
    return (JSON.parse(cli.stdout) as { token: string }).token;
  };
  const metrics = async (series: string[]) => {
    const lines = (await (await fetch(`${ops}/metrics`)).text()).split('\n');
    return series.map((name) => Number(lines.find((l) => l.startsWith(`${name} `))?.slice(name.length + 1) ?? 0));
  };
  return { pid: c.pid!, api, ops, token, call, callAs, createAccount, metrics, stop };
}
