// A request body with Content-Encoding, on every class of route (JSON, form,
// upload, hooks): decoded within the body limit, or answered 415 (an encoding
// we do not decode) / 413 (too large once decoded) / 400 (not what it claims
// to be), never 500.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { expectOk } from '../support/expect.js';
import { newWorkspace, stack } from '../support/stack.js';

const ENCODERS: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

async function send(path: string, body: Buffer, headers: Record<string, string>) {
  const res = await fetch(stack().url + path, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : null };
}

describe('compressed request bodies', () => {
  let key: string;
  let hookId: string;
  let channelId: string;

  before(async () => {
    const ws = await newWorkspace();
    key = ws.ownerKey;
    channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: `z-${Date.now()}` }), 201).data.id;
    hookId = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channelId, name: 'z' }), 201).data.id;
  });

  const routes = () => [
    { name: 'JSON', path: `/api/v1/channels/${channelId}/messages`, type: 'application/json', body: JSON.stringify({ content: 'zipped' }), ok: 201, auth: true },
    { name: 'native hook', path: `/hooks/${hookId}`, type: 'application/json', body: JSON.stringify({ content: 'zipped' }), ok: 201, auth: false },
    { name: 'compatible hook (form)', path: `/hooks/compat/${hookId}`, type: 'application/x-www-form-urlencoded', body: `payload=${encodeURIComponent(JSON.stringify({ text: 'zipped' }))}`, ok: 200, auth: false },
    { name: 'compatible hook (JSON)', path: `/hooks/compat/${hookId}`, type: 'application/json', body: JSON.stringify({ text: 'zipped' }), ok: 200, auth: false },
  ];

  for (const encoding of Object.keys(ENCODERS)) {
    it(`decodes ${encoding} on JSON, form and hook routes`, async () => {
      for (const r of routes()) {
        const res = await send(r.path, ENCODERS[encoding]!(Buffer.from(r.body)), { 'content-type': r.type, 'content-encoding': encoding, ...(r.auth ? { authorization: `Bearer ${key}` } : {}) });
        expect(res.status, `${r.name}: ${res.text}`).to.equal(r.ok);
      }
    });
  }

  it('answers 415 unsupported_media_type for an encoding it does not decode, on every route class, uploads included', async () => {
    for (const encoding of ['compress', 'zstd', 'x-made-up', 'gzip, br']) {
      for (const r of routes()) {
        const res = await send(r.path, Buffer.from(r.body), { 'content-type': r.type, 'content-encoding': encoding, ...(r.auth ? { authorization: `Bearer ${key}` } : {}) });
        expect(res.status, `${r.name} ${encoding}: ${res.text}`).to.equal(415);
        expect(res.json.error.code).to.equal('unsupported_media_type');
      }
    }
  });

  it('answers 400, never 500, for a body that is not what its encoding says', async () => {
    for (const encoding of Object.keys(ENCODERS)) {
      for (const r of routes()) {
        const res = await send(r.path, Buffer.from('not compressed at all'), { 'content-type': r.type, 'content-encoding': encoding, ...(r.auth ? { authorization: `Bearer ${key}` } : {}) });
        expect(res.status, `${r.name} ${encoding}: ${res.text}`).to.be.oneOf([400, 415]);
      }
    }
  });

  it('answers 413 for a small body that decodes past the limit (a compression bomb)', async () => {
    const bomb = JSON.stringify({ content: 'a'.repeat(1024 * 1024 + 1) }); // past the 1 MB body limit once decoded
    for (const encoding of Object.keys(ENCODERS)) {
      for (const r of routes()) {
        const res = await send(r.path, ENCODERS[encoding]!(Buffer.from(bomb)), { 'content-type': r.type, 'content-encoding': encoding, ...(r.auth ? { authorization: `Bearer ${key}` } : {}) });
        expect(res.status, `${r.name} ${encoding}: ${res.text}`).to.equal(413);
      }
    }
  });

  it('answers an upload with a compressed body 415 or stores it decoded, never 500', async () => {
    const boundary = 'zzboundary';
    const form = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="z.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`);
    for (const [encoding, encode] of [...Object.entries(ENCODERS), ['x-made-up', (b: Buffer) => b] as const]) {
      const res = await send('/api/v1/files', encode(form), { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-encoding': encoding, authorization: `Bearer ${key}` });
      expect(res.status, `${encoding}: ${res.text}`).to.equal(415);
    }
  });
});
