// Serves the built web app (services/web/dist, written by `npm run build:web`,
// which `npm install` runs) at `/`. Mounted after the API routes, so it only
// sees requests no route answered: /api/... and /hooks/... keep their 404s,
// any other GET gets index.html (the app routes on the client). Hashed files
// under /assets/ never change and are cached for a year; index.html is
// revalidated every time, as are the service worker (/sw.js) and the web
// manifest. Every answer carries a strict Content-Security-Policy.
// It reads files only: the API imports no web code.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Context, Middleware } from 'koa';
import { COMPRESSION_THRESHOLD, preferredEncoding } from '../../shared/http/compression.js';

export const WEB_DIST = fileURLToPath(new URL('../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/** The policy: our own scripts and styles only, no plugins, no framing, API calls to this origin. */
export function contentSecurityPolicy() {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    // https: for block images, avatars and real S3's presigned links; the embedded store's links are our own paths.
    "img-src 'self' data: blob: https:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join('; ');
}

const PASS_THROUGH = /^\/(api|hooks)(\/|$)/;

/** Text files worth compressing (fonts and images are compressed already). */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.svg', '.json', '.map', '.webmanifest']);

/**
 * Asked again on every use (`no-cache`), like index.html: the service worker,
 * whose change is what installs a new build, and the manifest it names.
 */
const REVALIDATED = new Set(['/sw.js', '/manifest.webmanifest']);

/**
 * A file's body for this request: the built files never change while they are
 * served, so each is compressed once, at brotli's best, and kept (the shared
 * compression middleware, shared/http/compression.ts, leaves an answer that
 * already has a Content-Encoding alone, and compresses the API's answers).
 */
function encoded(ctx: Context, dist: Files, name: string, file: Buffer): Buffer {
  if (file.length < COMPRESSION_THRESHOLD || !COMPRESSIBLE.has(path.extname(name) || '.html')) return file;
  ctx.vary('Accept-Encoding');
  const encoding = preferredEncoding(ctx);
  if (!encoding) return file;
  const key = `${encoding}:${name}`;
  let body = dist.compressed.get(key);
  if (!body) {
    body = encoding === 'br' ? brotliCompressSync(file, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: file.length } }) : gzipSync(file, { level: 9 });
    dist.compressed.set(key, body);
  }
  ctx.set('Content-Encoding', encoding);
  return body;
}

interface Files {
  index: Buffer | null;
  files: Map<string, Buffer>;
  /** Compressed copies, made on first request: `br:/assets/x.js`. */
  compressed: Map<string, Buffer>;
  stamp: number;
}

function readDist(dir: string): Files {
  const files = new Map<string, Buffer>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.posix.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else files.set(`/${rel}`, readFileSync(path.join(dir, rel)));
    }
  };
  walk('');
  return { index: files.get('/index.html') ?? null, files, compressed: new Map(), stamp: statSync(path.join(dir, 'index.html')).mtimeMs };
}

export function webApp({ dir = WEB_DIST }: { dir?: string } = {}): Middleware {
  const csp = contentSecurityPolicy();
  let cache: Files | null = null;
  // Read once; read again when a rebuild replaced index.html (development).
  const load = () => {
    const indexFile = path.join(dir, 'index.html');
    if (!existsSync(indexFile)) return null;
    if (!cache || statSync(indexFile).mtimeMs !== cache.stamp) cache = readDist(dir);
    return cache;
  };
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || PASS_THROUGH.test(ctx.path)) return next();
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    const dist = load();
    if (!dist?.index) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The web app is not built: run `npm run build:web` (npm install does it).\n';
      return;
    }
    const file = dist.files.get(ctx.path);
    if (file && ctx.path !== '/index.html') {
      ctx.type = TYPES[path.extname(ctx.path)] ?? 'application/octet-stream';
      ctx.set('Cache-Control', ctx.path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : REVALIDATED.has(ctx.path) ? 'no-cache' : 'public, max-age=3600');
      ctx.body = ctx.method === 'HEAD' ? file : encoded(ctx, dist, ctx.path, file);
      return;
    }
    // A missing hashed asset is a 404, never the page (a stale tab must not parse HTML as script).
    if (ctx.path.startsWith('/assets/')) return next();
    ctx.type = TYPES['.html']!;
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = ctx.method === 'HEAD' ? dist.index : encoded(ctx, dist, '/index.html', dist.index);
  };
}
