// Compression of every text answer of the process (the web app's files, the
// API's JSON, error answers), brotli or gzip by the request's Accept-Encoding:
// the API's JSON in one piece where the route sets it (compressedJson), the
// rest through koa-compress. Left alone: the event stream (the gateway writes it
// itself, and a compressor would hold frames back), types that are compressed
// already (images, fonts, archives: `compressible` says no), and a stored
// file's download (Content-Disposition), which goes out byte for byte as
// stored so its length and ranges stay true.
import compress from 'koa-compress';
import type { Context, Next } from 'koa';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Answers shorter than this (in bytes) go uncompressed (a kept page is kept compressed only from this length on). */
export const COMPRESSION_THRESHOLD = 1024;

// Answers are compressed per request, so for speed over the last percent: brotli quality 3 and gzip
// level 3. The channel list (100 channels, 38 KB) took 748 µs at brotli 5 and 172 µs at 3 (1 % apart
// in size), 268 µs at gzip 6 and 150 µs at 3 (5 % more bytes); a history page (19 KB) 287 and 97 µs,
// 125 and 109 µs.
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 3 } };
const GZIP = { level: 3 };

/** Whether the request's Accept-Encoding takes `encoding` (a request without one takes none). */
export const takesEncoding = (ctx: Context, encoding: 'br' | 'gzip') => ctx.acceptsEncodings(encoding) === encoding;

/** The encoding an answer compressed here goes out in: brotli whenever taken (it is smaller, and koa-compress prefers it too), else gzip, else none. */
export const preferredEncoding = (ctx: Context): 'br' | 'gzip' | null => (takesEncoding(ctx, 'br') ? 'br' : takesEncoding(ctx, 'gzip') ? 'gzip' : null);

/**
 * A JSON answer's body (shared/http/route.ts), compressed here in one piece
 * when the client takes br or gzip and it is long enough: koa-compress pipes
 * an answer through a zlib stream on the thread pool, which cost a history
 * page read by cursor 1,303 µs of the API's CPU against 885 µs compressed in
 * one piece (docs/bench.md, "JSON answers compressed in one piece"). The
 * answer then has its Content-Encoding, which koa-compress leaves alone.
 */
export function compressedJson(ctx: Context, text: string): string | Buffer {
  if (Buffer.byteLength(text) < COMPRESSION_THRESHOLD) return text;
  const encoding = preferredEncoding(ctx);
  if (!encoding) return text;
  ctx.set('Content-Encoding', encoding);
  return encoding === 'br' ? brotliCompressSync(text, BROTLI) : gzipSync(text, GZIP);
}

/** Every other answer (errors, metrics, streams): through koa-compress, with the same levels. */
export function compression() {
  const middleware = compress({
    threshold: COMPRESSION_THRESHOLD,
    br: BROTLI,
    gzip: GZIP,
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
