import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import type Koa from 'koa';

/** Where the page, the icon and (in dist/ only) the prebuilt script and style sheet are. */
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
};

/** The page and the unhashed names: a new deploy must not leave an old script in browsers. */
const REVALIDATE = 'no-cache';
/** A content-hashed name never changes content: browsers keep it without asking again. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset {
  type: string;
  body: Buffer;
  /** Precompressed once: the files are the same for every request. */
  br: Buffer;
  gzip: Buffer;
  /** The name with the content's hash (app.3f2a91c0.js); undefined for the page itself. */
  hashed?: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};

function asset(name: string, text: string, hash: boolean): Asset {
  const body = Buffer.from(text);
  const dot = name.lastIndexOf('.');
  const ext = name.slice(dot + 1);
  return {
    type: TYPES[ext] ?? 'application/octet-stream',
    body,
    br: brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzip: gzipSync(body, { level: 9 }),
    hashed: hash ? `${name.slice(0, dot)}.${createHash('sha256').update(body).digest('hex').slice(0, 12)}.${ext}` : undefined,
  };
}

/**
 * The dashboard's files, built once: the compiled gateway (dist/) serves the script and style
 * sheet `npm run build` bundled; from the sources (tsx) there are none, so both are bundled at the
 * first request, in memory. The page names the script, style sheet and icon by their content hashes.
 * A failed bundle is not cached: the next request tries again.
 */
function assets(): () => Promise<Map<string, Asset>> {
  const read = (name: string) => readFileSync(new URL(name, STATIC), 'utf8');
  let built: Promise<Map<string, Asset>> | undefined;
  const build = async () => {
    const { script, style } = existsSync(new URL('app.js', STATIC))
      ? { script: read('app.js'), style: read('style.css') }
      : await import('./bundle.ts').then(({ bundleDashboard }) => bundleDashboard());
    const files = new Map<string, Asset>();
    for (const [name, text] of [['app.js', script], ['style.css', style], ['favicon.svg', read('favicon.svg')]] as const) {
      const a = asset(name, text, true);
      files.set(name, a);
      files.set(a.hashed!, a);
    }
    let page = read('index.html');
    for (const name of ['app.js', 'style.css', 'favicon.svg']) page = page.replace(`"${name}"`, `"${files.get(name)!.hashed}"`);
    files.set('index.html', asset('index.html', page, false));
    return files;
  };
  return () => {
    built ??= build().catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
}

/**
 * The dashboard at /dashboard/ (and / redirecting there): static files only, compressed (brotli
 * or gzip, as the browser accepts), the hashed ones cached for good. It holds no session and no
 * cookie: the page keeps the API token in sessionStorage and calls /api/v1 with it.
 */
export function dashboardMiddleware(): Koa.Middleware {
  const files = assets();
  return async (ctx, next) => {
    const get = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (get && (ctx.path === '/' || ctx.path === '/dashboard')) {
      ctx.redirect('/dashboard/');
      return;
    }
    // Browsers ask for /favicon.ico on their own (an API page, an old bookmark): the same icon.
    const name = !get ? undefined : ctx.path === '/favicon.ico' ? 'favicon.svg' : ctx.path === '/dashboard/' ? 'index.html' : ctx.path.startsWith('/dashboard/') ? ctx.path.slice('/dashboard/'.length) : undefined;
    const file = name === undefined ? undefined : (await files()).get(name);
    if (!file) {
      await next();
      return;
    }
    ctx.set(DASHBOARD_HEADERS);
    ctx.set('Cache-Control', name === file.hashed ? IMMUTABLE : REVALIDATE);
    ctx.vary('Accept-Encoding');
    ctx.type = file.type;
    const encoding = ctx.acceptsEncodings('br', 'gzip', 'identity');
    if (encoding === 'br' || encoding === 'gzip') {
      ctx.set('Content-Encoding', encoding);
      ctx.body = file[encoding];
    } else ctx.body = file.body;
  };
}
