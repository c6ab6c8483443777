import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time under `paths` (files and directories, recursively). */
function newest(paths: string[]): number {
  let latest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    latest = Math.max(latest, stat.mtimeMs);
    if (stat.isDirectory()) latest = Math.max(latest, newest(readdirSync(path).map((name) => join(path, name))));
  }
  return latest;
}

/**
 * ./dist when `npm run build` made it after the last change to what it compiles and bundles (the
 * dashboard's bundle included), else undefined. Like bin/tock.js, a stale build is never used.
 */
export function currentBuild(root = process.cwd()): string | undefined {
  const dist = join(root, 'dist');
  const entry = join(dist, 'services/embedded/main.js');
  const bundle = join(dist, 'services/gateway/dashboard/static/app.js');
  if (!existsSync(entry) || !existsSync(bundle)) return undefined;
  const sources = newest(['services', 'shared', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((p) => join(root, p)));
  return Math.min(statSync(entry).mtimeMs, statSync(bundle).mtimeMs) > sources ? dist : undefined;
}

/** The V8 flags every Tock process runs with, as `npm start`, the image and the manifests give them (docs/operations.md says why). */
export const NODE_FLAGS = ['--max-semi-space-size=64', '--heap-growing-percent=100'];

let checked: { dist: string | undefined } | undefined;

/**
 * How to start `services/<name>/main`: the compiled build when it is current (what `.ci/run` makes
 * before the tests, and what the image runs), which starts in half the time of the TypeScript
 * sources through tsx; the sources otherwise. Decided once per test process.
 */
export function serviceCommand(name: string): string[] {
  checked ??= { dist: currentBuild() };
  return checked.dist ? [...NODE_FLAGS, join(checked.dist, 'services', name, 'main.js')] : [...NODE_FLAGS, '--import', 'tsx', `services/${name}/main.ts`];
}
