import { fileURLToPath } from 'node:url';

/** The browser code's entry point, next to this file in the source tree. */
export const DASHBOARD_ENTRY = fileURLToPath(new URL('./src/main.ts', import.meta.url));
/** The style sheet's entry point: the dashboard's own rules, after the chart library's (an @import). */
export const DASHBOARD_STYLE = fileURLToPath(new URL('./static/style.css', import.meta.url));

/**
 * Bundles the dashboard's browser code into one ES module and its style sheet into one file, in
 * memory: the chart library (uPlot) is a dependency of both. esbuild is a dev dependency: it is
 * loaded only here, when the sources run through tsx (`npm start`) or when `npm run build` writes
 * the bundle into dist/; the compiled gateway serves those prebuilt files and never loads esbuild,
 * so an image with its dev dependencies pruned still serves the dashboard.
 */
export async function bundleDashboard(options: { minify?: boolean } = {}): Promise<{ script: string; style: string }> {
  const esbuild = await import('esbuild');
  const common = { bundle: true, write: false, minify: options.minify ?? false, sourcemap: false, legalComments: 'none', logLevel: 'silent' } as const;
  const [script, style] = await Promise.all([
    esbuild.build({ ...common, entryPoints: [DASHBOARD_ENTRY], format: 'esm', platform: 'browser', target: ['es2022'] }),
    esbuild.build({ ...common, entryPoints: [DASHBOARD_STYLE] }),
  ]);
  const text = (result: typeof script, what: string) => {
    const [file] = result.outputFiles;
    if (!file) throw new Error(`esbuild produced no dashboard ${what}`);
    return file.text;
  };
  return { script: text(script, 'bundle'), style: text(style, 'style sheet') };
}
