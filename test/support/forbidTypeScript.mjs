// `node --import ./test/support/forbidTypeScript.mjs ...`: fails any module load that would need a
// TypeScript loader (a .ts/.mts/.cts file, or tsx itself) or esbuild (the dashboard's bundler, a
// dev dependency the image prunes). Workers inherit the flag, so it holds on the executor thread
// too. Proves that compiled code runs as plain JavaScript with production dependencies only.
import { register } from 'node:module';

const hooks = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (/\\.[cm]?ts$/.test(new URL(resolved.url).pathname) || /\\/node_modules\\/(tsx|esbuild)\\//.test(resolved.url)) {
    throw new Error((resolved.url.includes('/esbuild/') ? 'esbuild' : 'TypeScript') + ' at run time: ' + resolved.url);
  }
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
