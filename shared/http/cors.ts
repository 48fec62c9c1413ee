// CORS for the browser origins listed in CORS_ORIGINS (shared/config.ts), on
// every route of the process: the API, the stream and error answers alike.
// An origin not listed gets no CORS headers, so the browser keeps the answer
// from its page. Keys travel in the Authorization header, never in cookies,
// so credentials are not allowed (docs/realtime.md shows a browser reading the
// stream with fetch()).
import cors from '@koa/cors';
import type { Context } from 'koa';

/** Headers a page may send besides the CORS-safelisted ones. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'Last-Event-ID', 'X-Request-Id'];

/** Response headers a page may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-Service-Feature-Level',
  'X-Request-Id',
];

/** How long a browser may reuse a preflight answer (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

export function corsMiddleware(allowedOrigins: readonly string[]) {
  const allowed = new Set(allowedOrigins);
  return cors({
    // Returning '' lets the request through untouched: no CORS headers.
    origin: (ctx: Context) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: ALLOWED_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    credentials: false,
  });
}
