import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { freePort } from './processes.ts';
import { waitFor } from './waitFor.ts';

export const NATS_USERS = ['planner', 'executor', 'jobs', 'logs', 'notifier', 'subscriber'] as const;
export type NatsUser = (typeof NATS_USERS)[number];

/** Debian installs nats-server in /usr/sbin, which is not on every PATH. */
const natsServerBinary = () => ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => existsSync(p)) ?? 'nats-server';

/**
 * nats-server parses an environment value like a config value: one that starts with a digit
 * is read as a number and fails. A letter and hex digits always read as a string.
 */
const natsPassword = () => `p${randomBytes(24).toString('hex')}`;

/**
 * A real nats-server of our own started with deploy/k8s/base/nats.conf, rendered for a test: a free
 * port, no monitoring port, a temporary store; each user's password from the environment, as
 * the Kubernetes Secret gives them.
 */
export async function startNatsWithUsers() {
  const dir = mkdtempSync(join(tmpdir(), 'tock-nats-users-'));
  const port = await freePort();
  const config = readFileSync('deploy/k8s/base/nats.conf', 'utf8')
    .replace(/^port: 4222$/m, `port: ${port}\nhost: 127.0.0.1`)
    .replace(/^http_port: 8222$/m, '')
    .replace(/store_dir: "\/data"/, `store_dir: "${join(dir, 'js')}"`);
  if (config.includes('8222') || !config.includes(`port: ${port}`)) throw new Error('deploy/k8s/base/nats.conf changed shape: update startNatsWithUsers');
  writeFileSync(join(dir, 'nats.conf'), config);
  const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, natsPassword()])) as Record<NatsUser, string>;
  const env = Object.fromEntries(NATS_USERS.map((u) => [`NATS_${u.toUpperCase()}_PASSWORD`, passwords[u]]));
  let child: ChildProcess;
  let log = '';
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      child = spawn(natsServerBinary(), ['-c', join(dir, 'nats.conf')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let ready = false;
      const mark = log.length;
      const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${log}`)), 15_000);
      const onData = (c: Buffer) => {
        log += String(c);
        if (!ready && /Server is ready/.test(log.slice(mark))) {
          ready = true;
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}:\n${log}`)));
    });
  const halt = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    passwords,
    /** The environment of a Tock service that connects as `user`. */
    envOf: (user: NatsUser) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user] }),
    log: () => log,
    /** Stops the server (SIGTERM: a clean shutdown; SIGKILL: a crash), keeping its store for `start`. */
    halt,
    /** Starts it again on the same port with the same store. */
    start: launch,
    async stop() {
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A NATS server of one test alone (its own port and store directory), so it can be killed and started again. */
export function natsServer(port: number, storeDir: string, binary = natsServerBinary()) {
  let child: ChildProcess | null = null;
  return {
    url: `nats://127.0.0.1:${port}`,
    /** extraArgs: more nats-server flags for this start only (a user and password, say). */
    async start(extraArgs: string[] = []) {
      child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, ...extraArgs], { stdio: 'ignore' });
      await waitFor(async () => {
        const socket = connect(port, '127.0.0.1');
        return new Promise<boolean>((resolve) => {
          socket.once('connect', () => (socket.destroy(), resolve(true)));
          socket.once('error', () => resolve(false));
        });
      }, 'nats-server to listen', 10_000);
    },
    /** Like a crash: no goodbye to the clients. */
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
  };
}

/**
 * A JetStream nats-server of this test file alone, on a free port with a temporary store. Tock's
 * streams have fixed names, so files sharing one server would see each other's runs: with a server
 * each, they run in parallel.
 */
export async function privateNats() {
  const dir = mkdtempSync(join(tmpdir(), 'tock-nats-'));
  const server = natsServer(await freePort(), dir);
  await server.start();
  return {
    url: server.url,
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Gives the enclosing describe a private nats-server: `url` is set once its before hook ran. The
 * suite calls `stop()` at the end of its own after hook, once the services on it are gone (mocha
 * runs after hooks in the order they were defined, and a service stopping drains to NATS).
 */
export function natsForThisSuite() {
  let server: Awaited<ReturnType<typeof privateNats>> | undefined;
  const holder = {
    url: '',
    stop: async () => server?.stop(),
  };
  before(async function () {
    this.timeout(20_000);
    server = await privateNats();
    holder.url = server.url;
  });
  return holder;
}
