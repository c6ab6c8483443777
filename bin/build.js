// Whether dist/ (`npm run build`: tsc's output and the dashboard's bundle) is current, and making
// it when it is not. Shared by `npm start` (bin/start.js), the CLI (bin/tock.js) and the tests'
// launchers (test/support/build.ts): a stale dist/ is never what runs.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What the build compiles and bundles: a change to any of them makes dist/ stale. */
const SOURCES = ['services', 'shared', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

/** The newest modification time under `paths` (files and directories, recursively). */
function newest(paths) {
  let latest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    latest = Math.max(latest, stat.mtimeMs);
    if (stat.isDirectory()) latest = Math.max(latest, newest(readdirSync(path).map((name) => join(path, name))));
  }
  return latest;
}

/** `root`/dist when it was built after the last change to what it compiles and bundles, else undefined. */
export function currentBuild(root = ROOT) {
  const dist = join(root, 'dist');
  const entry = join(dist, 'services/embedded/main.js');
  const bundle = join(dist, 'services/gateway/dashboard/static/app.js');
  if (!existsSync(entry) || !existsSync(bundle)) return undefined;
  // An image holds dist/ without the sources it was built from: nothing there to be newer.
  const sources = existsSync(join(root, 'services')) ? newest(SOURCES.map((p) => join(root, p))) : 0;
  return Math.min(statSync(entry).mtimeMs, statSync(bundle).mtimeMs) > sources ? dist : undefined;
}

/** A package's file as node would find it from `root` (a parent's node_modules included), or undefined. */
function resolveFrom(root, path) {
  try {
    return createRequire(join(root, 'package.json')).resolve(path);
  } catch {
    return undefined;
  }
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Makes `root`/dist current: nothing when it is, else the build's two steps (tsc, then the
 * dashboard's bundle), about ten seconds. One process builds at a time (a lock file); another
 * that finds the lock waits for it and uses what it built. `say`: where progress goes.
 */
export function ensureBuild(root = ROOT, say = (line) => process.stderr.write(`${line}\n`)) {
  if (currentBuild(root)) return;
  const tsc = resolveFrom(root, 'typescript/bin/tsc');
  if (!tsc) throw new Error('dist/ is missing or older than the sources, and TypeScript is not installed to build it: run `npm install` (dev dependencies included), then start again');
  const lock = join(root, '.build.lock');
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A lock left by a build that was killed is taken over after five minutes.
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > 300_000) rmSync(lock, { force: true });
      sleep(200);
    }
  }
  try {
    if (currentBuild(root)) return;
    say('Building dist/ (no build yet, or the sources changed since the last one): about ten seconds.');
    const started = Date.now();
    const run = (args) => spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
    const compiled = run([tsc, '-p', join(root, 'tsconfig.build.json')]);
    // tsc still writes its output when it finds a type error: that is reported, and what it wrote runs.
    if (compiled.status !== 0) say(`tsc reported problems (the build is used anyway):\n${compiled.stdout}${compiled.stderr}`);
    const bundled = run(['--import', 'tsx', join(root, 'services/gateway/dashboard/build.ts')]);
    if (bundled.status !== 0) throw new Error(`the dashboard's bundle failed:\n${bundled.stdout}${bundled.stderr}`);
    if (!existsSync(join(root, 'dist/services/embedded/main.js'))) throw new Error(`tsc wrote no dist/services/embedded/main.js:\n${compiled.stdout}${compiled.stderr}`);
    say(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  } finally {
    rmSync(lock, { force: true });
  }
}
