/** podman, kubectl and nft as the deployment test runs them (runc: crun fails on this host's hybrid cgroup mount). */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The same limits for the pods' infra containers, which take no --ulimit: through a containers.conf
 * of the test's own (podman's defaults exceed this host's hard limits and runc refuses them).
 */
const CONF_DIR = process.env.TOCK_DEPLOY_CACHE ?? '/var/tmp/tock-deploy';
mkdirSync(CONF_DIR, { recursive: true });
writeFileSync(`${CONF_DIR}/containers.conf`, '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n');
process.env.CONTAINERS_CONF = `${CONF_DIR}/containers.conf`;

export const PODMAN = ['podman', '--runtime', 'runc', '--cgroup-manager', 'cgroupfs'];
/** The limits every container gets (podman's defaults exceed this host's hard limits). */
export const ULIMITS = ['--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096:4096'];

export async function podman(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<string> {
  if (opts.input !== undefined) return podmanSync(args, opts.input);
  const { stdout } = await run(PODMAN[0]!, [...PODMAN.slice(1), ...args], { maxBuffer: 64 << 20, timeout: opts.timeoutMs ?? 300_000 });
  return stdout;
}

export function podmanSync(args: string[], input?: string): string {
  const r = spawnSync(PODMAN[0]!, [...PODMAN.slice(1), ...args], { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`podman ${args.slice(0, 3).join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** A command's exit code and output, never throwing (probes, flows). */
export async function attempt(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(cmd, args, { timeout: timeoutMs, maxBuffer: 16 << 20 });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code?: unknown; stdout?: string; stderr?: string; killed?: boolean };
    return { code: typeof err.code === 'number' ? err.code : 124, out: `${err.stdout ?? ''}${err.stderr ?? ''}${err.killed ? ' (timed out)' : ''}` };
  }
}

export function sh(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ').slice(0, 200)}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Loads an nftables ruleset into the network namespace of a process. */
export const nftIn = (pid: number, ruleset: string) => sh('nsenter', ['-t', String(pid), '-n', 'nft', '-f', '-'], { input: ruleset });
