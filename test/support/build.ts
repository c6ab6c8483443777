import { join } from 'node:path';
import { currentBuild } from '../../bin/build.js';

export { currentBuild };

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
