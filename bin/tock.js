#!/usr/bin/env node
// `tock ...`: the CLI. It runs the compiled CLI in dist/ (`npm run build`; what the image ships):
// plain JavaScript, quick to start. In a checkout with no build, or whose TypeScript sources
// changed after the build, it runs the sources through tsx (a dev dependency) instead, so a
// stale dist/ is never what answers.
import { existsSync, readdirSync, statSync } from 'node:fs';

const compiled = new URL('../dist/services/cli/main.js', import.meta.url);
const source = new URL('../services/cli/main.ts', import.meta.url);

/** Whether any .ts file under services/ or shared/ is newer than the compiled CLI. */
function sourcesChangedSince(builtMs) {
  for (const dir of ['../services/', '../shared/']) {
    const root = new URL(dir, import.meta.url);
    for (const name of readdirSync(root, { recursive: true })) {
      if (name.endsWith('.ts') && statSync(new URL(name, root)).mtimeMs > builtMs) return true;
    }
  }
  return false;
}

if (existsSync(compiled) && !(existsSync(source) && sourcesChangedSince(statSync(compiled).mtimeMs))) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
}
