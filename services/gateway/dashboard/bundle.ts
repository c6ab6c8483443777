import { fileURLToPath } from 'node:url';

/** The browser code's entry point, next to this file in the source tree. */
export const DASHBOARD_ENTRY = fileURLToPath(new URL('./src/main.ts', import.meta.url));

/**
 * Bundles the dashboard's browser code into one ES module, in memory. esbuild is a dev
 * dependency: it is loaded only here, when the sources run through tsx (`npm start`) or when
 * `npm run build` writes the bundle into dist/; the compiled gateway serves that prebuilt file and
 * never loads esbuild, so an image with its dev dependencies pruned still serves the dashboard.
 */
export async function bundleDashboard(options: { minify?: boolean } = {}): Promise<string> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [DASHBOARD_ENTRY],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: options.minify ?? false,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const [file] = result.outputFiles;
  if (!file) throw new Error('esbuild produced no dashboard bundle');
  return file.text;
}
