#!/usr/bin/env node
// `tock ...`: the CLI. It runs the compiled CLI in dist/ (`npm run build`; what the image ships):
// plain JavaScript, quick to start. In a checkout with no build, or whose TypeScript sources
// changed after the build, it runs the sources through tsx (a dev dependency) instead, so a
// stale dist/ is never what answers.
import { currentBuild } from './build.js';

const compiled = new URL('../dist/services/cli/main.js', import.meta.url);
const source = new URL('../services/cli/main.ts', import.meta.url);

if (currentBuild()) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
}
