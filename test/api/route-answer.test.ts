// A route's JSON answer is serialized once (shared/http/route.ts, `setBody`):
// handed an object, Koa's `length`, which the compressor reads, stringified
// it to measure it, and the compressor or Koa's answer stringified it again.
// And compressed in one piece (shared/http/compression.ts, compressedJson):
// sent with its length, not streamed in chunks.
import { expect } from 'chai';
import Koa from 'koa';
import Router from '@koa/router';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { compression } from '../../shared/http/compression.js';
import { RouteTable } from '../../shared/http/route.js';
import type { AppState } from '../../shared/http/context.js';

/** GET `path` with an Accept-Encoding (or none): status, headers and the decoded body. */
function get(port: number, path: string, encoding: string | null) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; bytes: number }>((resolve, reject) => {
    const req = http.get({ port, path, headers: encoding ? { 'accept-encoding': encoding } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const used = res.headers['content-encoding'];
        const body = used === 'gzip' ? gunzipSync(raw) : used === 'br' ? brotliDecompressSync(raw) : raw;
        resolve({ status: res.statusCode!, headers: res.headers, text: body.toString('utf8'), bytes: raw.length });
      });
    });
    req.on('error', reject);
  });
}

describe('a route answers its JSON serialized once', () => {
  let server: http.Server;
  let port: number;
  let serialized = 0;
  // Its toJSON runs once per serialization of the answer; large enough to be compressed.
  const counted = { toJSON: () => (serialized++, 'é'.repeat(3000)) };

  before(async () => {
    const app = new Koa();
    const router = new Router<AppState>();
    new RouteTable('/t', router)
      .add({ method: 'get', path: '/object', summary: 'an object', tag: 't', scope: 'public', auth: 'none' }, async () => ({ data: { value: counted } }))
      .add({ method: 'get', path: '/array', summary: 'an array', tag: 't', scope: 'public', auth: 'none' }, async () => [counted])
      .add({ method: 'get', path: '/small', summary: 'under the threshold', tag: 't', scope: 'public', auth: 'none' }, async () => ({ data: 'x'.repeat(900) }));
    app.use(compression());
    app.use(router.routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise((r) => server.close(r)));

  for (const encoding of [null, 'gzip', 'br']) {
    for (const [path, expected] of [
      ['/t/object', JSON.stringify({ data: { value: 'é'.repeat(3000) } })],
      ['/t/array', JSON.stringify(['é'.repeat(3000)])],
    ] as const) {
      it(`${path}, ${encoding ?? 'no'} encoding: one serialization, the same bytes, typed JSON`, async () => {
        serialized = 0;
        const res = await get(port, path, encoding);
        expect(res.status).to.equal(200);
        expect(serialized).to.equal(1);
        expect(res.text).to.equal(expected);
        expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
        expect(res.headers['content-encoding']).to.equal(encoding ?? undefined);
        // Unencoded, the length is the UTF-8 bytes' ('é' is two), not the characters'; encoded, the
        // compressed bytes', in one piece (a stream through a compressor goes chunked, with no length).
        expect(Number(res.headers['content-length'])).to.equal(encoding ? res.bytes : Buffer.byteLength(expected));
        expect(res.headers['transfer-encoding']).to.equal(undefined);
        expect(res.headers.vary).to.equal('Accept-Encoding');
      });
    }
  }

  for (const acceptEncoding of ['gzip', 'br', 'gzip, deflate, br']) {
    it(`leaves an answer under the threshold (1,024 bytes) uncompressed, Accept-Encoding: ${acceptEncoding}`, async () => {
      const res = await get(port, '/t/small', acceptEncoding);
      expect(res.headers['content-encoding']).to.equal(undefined);
      expect(res.text).to.equal(JSON.stringify({ data: 'x'.repeat(900) }));
    });
  }
});
