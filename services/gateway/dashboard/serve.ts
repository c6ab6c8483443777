import { existsSync, readFileSync } from 'node:fs';
import type Koa from 'koa';

/** Where the page, the style sheet and (in dist/ only) the prebuilt bundle are. */
const STATIC = new URL('./static/', import.meta.url);

/**
 * Every dashboard answer carries these. The page needs nothing inline (no inline script, no style
 * attribute), so the policy allows only this origin's files; the API it calls is same-origin too.
 * frame-ancestors 'none' keeps the page out of frames (click-jacking).
 */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  // A new deploy must not leave an old script in browsers: revalidate every time (the files are small).
  'Cache-Control': 'no-cache',
};

interface Asset {
  type: string;
  body: string;
}

/**
 * The dashboard's three files. The compiled gateway (dist/) serves the bundle `npm run build`
 * wrote; from the sources (tsx) there is none, so the browser code is bundled once, at the first
 * request, in memory. A failed bundle is not cached: the next request tries again.
 */
function assets() {
  const read = (name: string) => readFileSync(new URL(name, STATIC), 'utf8');
  const files: Record<string, () => Asset | Promise<Asset>> = {
    'index.html': () => ({ type: 'text/html; charset=utf-8', body: read('index.html') }),
    'style.css': () => ({ type: 'text/css; charset=utf-8', body: read('style.css') }),
  };
  let script: Promise<Asset> | undefined;
  files['app.js'] = () => {
    script ??= (existsSync(new URL('app.js', STATIC))
      ? Promise.resolve(read('app.js'))
      : import('./bundle.ts').then(({ bundleDashboard }) => bundleDashboard())
    ).then(
      (body) => ({ type: 'text/javascript; charset=utf-8', body }),
      (error: unknown) => {
        script = undefined;
        throw error;
      },
    );
    return script;
  };
  return files;
}

/**
 * The dashboard at /dashboard/ (and / redirecting there): static files only. It holds no session
 * and no cookie: the page keeps the API token in sessionStorage and calls /api/v1 with it.
 */
export function dashboardMiddleware(): Koa.Middleware {
  const files = assets();
  const fileOf = (path: string) => {
    if (!path.startsWith('/dashboard/')) return undefined;
    const name = path === '/dashboard/' ? 'index.html' : path.slice('/dashboard/'.length);
    return Object.hasOwn(files, name) ? files[name] : undefined;
  };
  return async (ctx, next) => {
    const get = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (get && (ctx.path === '/' || ctx.path === '/dashboard')) {
      ctx.redirect('/dashboard/');
      return;
    }
    const file = get ? fileOf(ctx.path) : undefined;
    if (!file) {
      await next();
      return;
    }
    const asset = await file();
    ctx.set(DASHBOARD_HEADERS);
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}
