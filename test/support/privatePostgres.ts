/**
 * A PostgreSQL server of one test's own (initdb into a temporary directory), so the test can stop
 * and start it: the shared server on 5432 must never be stopped. initdb and the server refuse to
 * run as root, so as root they run as the `postgres` OS user, which then owns the directory.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.ts';

const ROOT = '/usr/lib/postgresql';

/** The newest installed server's bin directory (Debian's layout), or undefined. */
export function postgresBinaries(): string | undefined {
  if (!existsSync(ROOT)) return undefined;
  const versions = readdirSync(ROOT)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(ROOT, v, 'bin', 'initdb')) && existsSync(join(ROOT, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(ROOT, versions[0], 'bin') : undefined;
}

/** Why a private server cannot run here, or undefined when it can. */
export function privatePostgresMissing(): string | undefined {
  const bin = postgresBinaries();
  if (!bin) return `no PostgreSQL server binaries under ${ROOT}/<version>/bin (apt-get install postgresql)`;
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root and there is no postgres OS user to run the server as';
  return undefined;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export async function startPrivatePostgres() {
  const bin = postgresBinaries();
  if (!bin) throw new Error(privatePostgresMissing());
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'tock-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const run = (args: string[]) => {
    const command = args.map(quote).join(' ');
    const result = asRoot ? spawnSync('su', ['postgres', '-s', '/bin/sh', '-c', command], { encoding: 'utf8' }) : spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${args[0]} failed (${result.status}): ${result.stderr || result.stdout}`);
  };
  // fsync off: a test's server, thrown away after; it makes initdb and commits fast on a busy machine.
  // Only the server is ever stopped or killed here, never the machine, so what it wrote to the
  // kernel survives without fsync. synchronous_commit stays on, as in production: with it off, a
  // COMMIT is answered before its WAL is written, and stop -m immediate (a crash) loses the last
  // fraction of a second of acknowledged commits, which no real deployment does (seen in the chaos
  // run as results acked by the logs service and missing from cron_logs after the restart).
  run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const server = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () => run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']),
    /**
     * `-m fast` (default): open sessions are ended at once (what a restart by an operator or an
     * orchestrator does); `immediate`: the server dies without a checkpoint, as in a crash.
     */
    stop: (mode: 'fast' | 'immediate' = 'fast') => run([join(bin, 'pg_ctl'), '-D', data, '-m', mode, '-w', '-t', '30', 'stop']),
    destroy() {
      try {
        if (existsSync(join(data, 'postmaster.pid'))) run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  server.start();
  return server;
}
