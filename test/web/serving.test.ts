// The API role serves the built web app: caching, the CSP, client routes, and
// the API's own 404s; the web app's API types are not stale.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { API_TYPES_FILE, webApiTypes } from '../../services/api/openapi-web-types.js';
import { WEB_DIST } from '../../services/api/web-app.js';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request, type IncomingHttpHeaders } from 'node:http';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';
import { ensureWebBuild } from './browser.js';

describe('web app: served by the API role', () => {
  before(() => ensureWebBuild());

  it('serves index.html at / and at client routes, never cached, with a strict CSP', async () => {
    for (const path of ['/', '/c/some-channel', '/settings']) {
      const res = await fetch(stack().url + path);
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/html/);
      expect(res.headers.get('cache-control')).to.equal('no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      for (const directive of ["script-src 'self'", "connect-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "style-src 'self'"]) {
        expect(csp, directive).to.include(directive);
      }
      expect(csp).to.not.include('unsafe-inline');
      const html = await res.text();
      expect(html).to.include('<div id="app">');
      // No inline script: every <script> has a src.
      expect(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).to.equal(null);
    }
  });

  it('serves hashed assets cached for a year; a missing asset is a 404, not the page', async () => {
    const html = await (await fetch(stack().url + '/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const res = await fetch(stack().url + script);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/javascript/);
    expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect((await fetch(stack().url + '/assets/gone-1234.js')).status).to.equal(404);
  });

  it('compresses text answers (the app\'s script, the API\'s JSON) with br or gzip as asked; never the event stream, fonts or a stored file', async () => {
    const ws = await newWorkspace();
    const html = await (await fetch(stack().url + '/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const font = readdirSync(path.join(WEB_DIST, 'assets')).find((f) => f.endsWith('.woff2'))!;
    const auth = { authorization: `Bearer ${ws.ownerKey}` };
    // An answer past the 1 KB threshold (smaller ones are not worth a compressor).
    const channel = await ws.owner.post('/api/v1/channels', { name: uniqueName('zip') });
    const posted = await ws.owner.post(`/api/v1/channels/${channel.body.data.id}/messages`, { content: 'a long message '.repeat(200) });
    expect(posted.status).to.equal(201);
    // The newest page is kept gzipped (services/core/messages/page-cache.ts): every client that takes gzip gets those bytes.
    const cases: { path: string; headers?: Record<string, string>; json?: boolean; keptGzipped?: boolean }[] = [
      { path: script },
      { path: '/api/v1/openapi.json', json: true },
      { path: `/api/v1/channels/${channel.body.data.id}/messages`, headers: auth, json: true, keptGzipped: true },
      { path: `/api/v1/channels/${channel.body.data.id}/messages/${posted.body.data.id}`, headers: auth, json: true },
    ];
    for (const c of cases) {
      for (const encoding of ['br', 'gzip'] as const) {
        const res = await raw(c.path, { ...c.headers, 'accept-encoding': encoding === 'br' ? 'gzip, deflate, br' : 'gzip' });
        const sent = c.keptGzipped ? 'gzip' : encoding;
        expect(res.headers['content-encoding'], `${c.path} ${encoding}`).to.equal(sent);
        expect(res.headers.vary).to.match(/accept-encoding/i);
        const plain = sent === 'br' ? brotliDecompressSync(res.body) : gunzipSync(res.body);
        expect(plain.length, c.path).to.be.greaterThan(res.body.length);
        if (c.json) JSON.parse(plain.toString('utf8'));
      }
      // No Accept-Encoding: as it is.
      expect((await raw(c.path, { ...c.headers })).headers['content-encoding'], c.path).to.equal(undefined);
    }
    // A font is compressed already.
    expect((await raw(`/assets/${font}`, { 'accept-encoding': 'br, gzip' })).headers['content-encoding']).to.equal(undefined);
    // A stored text file goes out byte for byte, as stored (its length stays true).
    const text = 'axid '.repeat(2000);
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), 'notes.txt');
    const uploaded = await fetch(`${stack().url}/api/v1/files`, { method: 'POST', headers: auth, body: form });
    expect(uploaded.status).to.equal(201);
    const fileId = ((await uploaded.json()) as { data: { id: string } }).data.id;
    const info = (await (await fetch(`${stack().url}/api/v1/files/${fileId}`, { headers: auth })).json()) as { data: { download_url: string } };
    const download = await raw(new URL(info.data.download_url, stack().url).pathname + new URL(info.data.download_url, stack().url).search, { 'accept-encoding': 'br, gzip' });
    expect(download.status).to.equal(200);
    expect(download.headers['content-encoding']).to.equal(undefined);
    expect(download.body.toString('utf8')).to.equal(text);
    // The event stream: frames go out as they happen, never held by a compressor.
    const stream = await new Promise<{ status?: number; encoding?: string | string[] }>((resolve, reject) => {
      const req = request(`${stack().url}/api/v1/stream`, { headers: { ...auth, 'accept-encoding': 'br, gzip', accept: 'text/event-stream' } }, (res) => {
        resolve({ status: res.statusCode, encoding: res.headers['content-encoding'] });
        req.destroy();
      });
      req.on('error', reject);
      req.end();
    });
    expect(stream).to.deep.equal({ status: 200, encoding: undefined });
  });

  it('leaves /api/... and /hooks/... to the API: unknown ones keep their JSON 404', async () => {
    for (const path of ['/api/v1/nothing', '/api', '/hooks/nothing/else']) {
      const res = await fetch(stack().url + path);
      expect(res.status, path).to.equal(404);
      expect((await res.json()).error.code).to.equal('not_found');
    }
    // Other methods on app paths are not the app's business either.
    expect((await fetch(stack().url + '/settings', { method: 'POST' })).status).to.equal(404);
  });

  it('has API types generated from the current OpenAPI document (run `npm run web:api-types` when this fails)', async () => {
    expect(readFileSync(API_TYPES_FILE, 'utf8') === (await webApiTypes()), 'services/web/src/lib/api-schema.d.ts is stale: run `npm run web:api-types`').to.equal(true);
  });
});

/** A GET as sent, the body as received (fetch would decode it). */
function raw(urlPath: string, headers: Record<string, string>) {
  return new Promise<{ status?: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const req = request(stack().url + urlPath, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
