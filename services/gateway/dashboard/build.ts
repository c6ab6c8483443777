import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleDashboard } from './bundle.ts';

/**
 * `npm run build`: writes the dashboard (bundled script, page, style sheet) next to the compiled
 * gateway, dist/services/gateway/dashboard/static/, where serve.ts finds it at run time without
 * esbuild. Runs from the sources (tsx), so it also works before anything is compiled.
 */
const source = new URL('./static/', import.meta.url);
const root = new URL('../../../', import.meta.url);
const target = new URL('dist/services/gateway/dashboard/static/', root);
mkdirSync(target, { recursive: true });
for (const name of ['index.html', 'style.css']) copyFileSync(new URL(name, source), new URL(name, target));
writeFileSync(new URL('app.js', target), await bundleDashboard({ minify: true }));
console.log(`dashboard bundle written to ${fileURLToPath(target)}`);
