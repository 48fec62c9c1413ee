// Compression of every text answer of the process (the web app's files, the
// API's JSON, error answers), brotli or gzip by the request's Accept-Encoding,
// through koa-compress. Left alone: the event stream (the gateway writes it
// itself, and a compressor would hold frames back), types that are compressed
// already (images, fonts, archives: `compressible` says no), and a stored
// file's download (Content-Disposition), which goes out byte for byte as
// stored so its length and ranges stay true.
import compress from 'koa-compress';
import type { Context, Next } from 'koa';
import { constants } from 'node:zlib';

export function compression() {
  const middleware = compress({
    threshold: 1024,
    // Quality 5: most of brotli's gain at a cost near gzip's (answers are compressed per request).
    br: { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } },
    gzip: {},
    deflate: false,
    zstd: false,
  });
  return async (ctx: Context, next: Next) =>
    middleware(ctx, async () => {
      await next();
      // (koa-compress's own filter, `compressible`, already skips images, fonts and archives.)
      if (ctx.response.get('Content-Disposition') || /^text\/event-stream\b/i.test(ctx.response.type)) ctx.compress = false;
    });
}
