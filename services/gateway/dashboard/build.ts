import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleDashboard } from './bundle.ts';

/**
 * `npm run build`: writes the dashboard (bundled script and style sheet, page, icon) next to the compiled
 * gateway, dist/services/gateway/dashboard/static/, where serve.ts finds it at run time without
 * esbuild. Runs from the sources (tsx), so it also works before anything is compiled. An argument
 * names another output directory than dist/ (the compiled-build test builds elsewhere).
 */
const source = new URL('./static/', import.meta.url);
const root = new URL('../../../', import.meta.url);
const outDir = process.argv[2] ? pathToFileURL(`${resolve(process.argv[2])}/`) : new URL('dist/', root);
const target = new URL('services/gateway/dashboard/static/', outDir);
mkdirSync(target, { recursive: true });
for (const name of ['index.html', 'favicon.svg']) copyFileSync(new URL(name, source), new URL(name, target));
const { script, style } = await bundleDashboard({ minify: true });
writeFileSync(new URL('app.js', target), script);
writeFileSync(new URL('style.css', target), style);
console.log(`dashboard bundle written to ${fileURLToPath(target)}`);
