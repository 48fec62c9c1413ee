import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { expect } from 'chai';
import sharp from 'sharp';
import { startStack } from '../../services/stack.js';
import { createLogger } from '../../shared/logger.js';
import { expectError, expectOk } from '../support/expect.js';
import { bucketKeys, hashOfUrl as hashOfAbsoluteUrl, multipartUploads, reachable, uploadFile, waitFor } from '../support/files.js';
import { newWorkspace, stack, testEnv } from '../support/stack.js';
import { busEvents } from '../support/bus.js';

/** Downloads a link of the shared stack (under PUBLIC_BASE_URL) from its real port. */
const hashOfUrl = (url: string) => hashOfAbsoluteUrl(reachable(stack(), url));

const MB = 1024 * 1024;
const LIMIT = 104_857_600;

async function readyFile(key: string, id: string) {
  const { Client } = await import('../support/client.js');
  const client = new Client(stack().url, key);
  return waitFor(async () => {
    const res = await client.get(`/api/v1/files/${id}`);
    return res.body?.data?.status !== 'processing' ? res.body.data : undefined;
  }, `file ${id} to be processed`);
}

describe('POST /files and GET /files/{id}', function () {
  this.timeout(120_000);

  it('stores a small file and serves the same bytes back through a presigned attachment link', async () => {
    const ws = await newWorkspace();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('hello, files\n'), name: 'notes.txt', type: 'text/plain' });
    const file = expectOk(up, 201).data;
    expect(file).to.include({ name: 'notes.txt', size: 13, content_type: 'text/plain', status: 'processing', sha256: null });
    expect(file.id).to.be.a('string');
    expect(file.created_at).to.be.a('string');

    const ready = await readyFile(ws.ownerKey, file.id);
    expect(ready).to.include({ status: 'ready', sha256: up.sha256, content_type: 'text/plain' });
    const got = expectOk(await ws.owner.get(`/api/v1/files/${file.id}`)).data;
    const url = new URL(got.download_url);
    expect(got.download_url.startsWith(`${stack().rt.config.publicBaseUrl}/api/v1/files/${file.id}/download?`)).to.equal(true);
    expect(Number(url.searchParams.get('expires')) - Date.now() / 1000).to.be.within(800, 900);
    const download = await hashOfUrl(got.download_url); // no key sent
    expect(download.status).to.equal(200);
    expect(download.sha256).to.equal(up.sha256);
    expect(download.headers.get('content-disposition')).to.equal('attachment; filename="notes.txt"');
    expect(download.headers.get('content-type')).to.equal('text/plain');
    expect(download.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(download.headers.get('content-security-policy')).to.match(/^sandbox/);
  });

  it('serves HTML and SVG as bytes (application/octet-stream, attachment, nosniff, sandbox), keeping their type in the File', async () => {
    const ws = await newWorkspace();
    for (const [name, type, data] of [
      ['page.html', 'text/html', '<html><script>alert(document.cookie)</script></html>'],
      ['pic.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
    ] as const) {
      const up = await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from(data), name, type });
      const ready = await readyFile(ws.ownerKey, expectOk(up, 201).data.id);
      const got = expectOk(await ws.owner.get(`/api/v1/files/${ready.id}`)).data;
      const download = await hashOfUrl(got.download_url);
      expect(download.status).to.equal(200);
      expect(download.headers.get('content-type'), name).to.equal('application/octet-stream');
      expect(download.headers.get('content-disposition')).to.equal(`attachment; filename="${name}"`);
      expect(download.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(download.headers.get('content-security-policy')).to.equal("sandbox; default-src 'none'");
    }
  });

  it('refuses a download link with a tampered signature, another file id or a past expiry (403)', async () => {
    const ws = await newWorkspace();
    const a = expectOk(await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('a') }), 201).data;
    const b = expectOk(await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('b') }), 201).data;
    const link = new URL(reachable(stack(), expectOk(await ws.owner.get(`/api/v1/files/${a.id}`)).data.download_url));
    expect((await fetch(link)).status).to.equal(200);

    const tampered = new URL(link);
    const sig = tampered.searchParams.get('sig')!;
    tampered.searchParams.set('sig', `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`);
    expectError(await asResponse(tampered), 403, 'forbidden');
    const later = new URL(link);
    later.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 3600));
    expectError(await asResponse(later), 403, 'forbidden');
    const otherFile = new URL(link.href.replace(a.id, b.id));
    expectError(await asResponse(otherFile), 403, 'forbidden');
    const unsigned = new URL(link);
    unsigned.search = '';
    expectError(await asResponse(unsigned), 403, 'forbidden');

    // Correctly signed with the stack's key, but expired.
    const key = readFileSync(path.join(stack().rt.config.dataDir, 'download-signing.key'));
    const past = Math.floor(Date.now() / 1000) - 1;
    const expired = new URL(link);
    expired.searchParams.set('expires', String(past));
    expired.searchParams.set('sig', createHmac('sha256', key).update(`${a.id}.${past}`).digest('base64url'));
    expectError(await asResponse(expired), 403, 'forbidden');
  });

  it('round-trips a few megabytes byte for byte', async () => {
    const ws = await newWorkspace();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, size: 7 * MB + 123, name: 'blob.bin' });
    const file = expectOk(up, 201).data;
    expect(file.size).to.equal(7 * MB + 123);
    const ready = await readyFile(ws.ownerKey, file.id);
    expect(ready.sha256).to.equal(up.sha256);
    const got = (await ws.owner.get(`/api/v1/files/${file.id}`)).body.data;
    const download = await hashOfUrl(got.download_url);
    expect(download).to.include({ sha256: up.sha256, size: 7 * MB + 123 });
  });

  it('accepts a file of exactly 104,857,600 bytes, streamed without Content-Length', async () => {
    const ws = await newWorkspace();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, size: LIMIT, name: 'big.bin', contentLength: false });
    const file = expectOk(up, 201).data;
    expect(file.size).to.equal(LIMIT);
    const ready = await readyFile(ws.ownerKey, file.id);
    expect(ready.sha256).to.equal(up.sha256);
    const download = await hashOfUrl((await ws.owner.get(`/api/v1/files/${file.id}`)).body.data.download_url);
    expect(download).to.include({ sha256: up.sha256, size: LIMIT });
  });

  for (const contentLength of [false, true]) {
    it(`refuses 101 MB with 413 file_too_large and keeps nothing (${contentLength ? 'with' : 'without'} Content-Length)`, async () => {
      const ws = await newWorkspace();
      const sent = spyOnS3();
      let up;
      try {
        up = await uploadFile(stack().url, { key: ws.ownerKey, size: 101 * MB, contentLength });
      } finally {
        sent.stop();
      }
      expectError(up, 413, 'file_too_large');
      if (!contentLength) {
        // streamed: parts were sent, then the multipart upload was aborted
        expect(sent.names).to.include('UploadPartCommand');
        expect(sent.names).to.include('AbortMultipartUploadCommand');
        expect(sent.names).not.to.include('CompleteMultipartUploadCommand');
      } else {
        expect(sent.names, 'refused from Content-Length before any storage call').to.deep.equal([]);
      }
      expect(up.body.error.message).to.match(/^file: /);
      const rows = await stack().rt.db('files').where({ workspace_id: ws.workspaceId });
      expect(rows).to.have.length(0);
      expect(await bucketKeys(stack(), `files/${ws.workspaceId}/`)).to.deep.equal([]);
      expect(multipartUploads(stack()), 'multipart parts left in the embedded store').to.deep.equal([]);
    });
  }

  it('answers 413 to Node fetch streaming 101 MB from a generator (the rest of the body is read and discarded, no broken pipe)', async () => {
    const ws = await newWorkspace();
    const boundary = 'axidlinger';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const block = randomBytes(1024 * 1024);
    async function* body() {
      yield head;
      for (let i = 0; i < 101; i++) {
        await pause(5); // paced like a client reading from disk or network: still sending when the 413 comes
        yield block;
      }
      yield tail;
    }
    const res = await fetch(`${stack().url}/api/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ws.ownerKey}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + 101 * block.length + tail.length),
      },
      body: ReadableStream.from(body()),
      duplex: 'half',
    } as RequestInit);
    expect(res.status).to.equal(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('file_too_large');
    expect(multipartUploads(stack())).to.deep.equal([]);
    expect(await bucketKeys(stack(), `files/${ws.workspaceId}/`)).to.deep.equal([]);
  });

  it('keeps reading a refused body after the 413, so a client still sending gets no reset', async () => {
    const ws = await newWorkspace();
    const boundary = 'axidraw';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n`;
    const block = randomBytes(1024 * 1024);
    const size = Buffer.byteLength(head) + 101 * block.length;
    const socket = net.connect(Number(new URL(stack().url).port), '127.0.0.1');
    const errors: string[] = [];
    socket.on('error', (err) => errors.push((err as NodeJS.ErrnoException).code ?? err.message));
    let answer = '';
    const answered = new Promise<void>((resolve) =>
      socket.on('data', (d) => {
        answer += d.toString();
        if (answer.includes('file_too_large')) resolve();
      }),
    );
    socket.write(
      `POST /api/v1/files HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ws.ownerKey}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${size}\r\n\r\n${head}`,
    );
    await answered;
    expect(answer).to.match(/^HTTP\/1\.1 413 /);
    // The rest of the body, after the answer: written without error and read by the server.
    for (let i = 0; i < 101 && errors.length === 0 && !socket.destroyed; i++) {
      await new Promise<void>((resolve) => socket.write(block, () => resolve()));
    }
    expect(errors, 'writes after the 413').to.deep.equal([]);
    expect(socket.destroyed).to.equal(false);
    socket.destroy();
  });

  it('leaves no object, no multipart parts and no row when the client drops the connection mid-body', async () => {
    const ws = await newWorkspace();
    const boundary = 'axidabort';
    const req = http.request(`${stack().url}/api/v1/files`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${ws.ownerKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('error', () => undefined); // we destroy it ourselves
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`);
    const block = randomBytes(1024 * 1024);
    for (let i = 0; i < 12; i++) req.write(block); // past two 5 MiB parts
    await waitFor(async () => multipartUploads(stack()).length > 0, 'a multipart upload to start');
    req.destroy();
    await waitFor(async () => multipartUploads(stack()).length === 0, 'the multipart parts to be removed');
    expect(await bucketKeys(stack(), `files/${ws.workspaceId}/`)).to.deep.equal([]);
    expect(await stack().rt.db('files').where({ workspace_id: ws.workspaceId })).to.have.length(0);
  });

  it('keeps download links working across a restart, under PUBLIC_BASE_URL, without a key', async () => {
    const env = testEnv({ PUBLIC_BASE_URL: 'https://files.example.test/' });
    const log = createLogger(env.config.logLevel);
    let s = await startStack(env.config, log);
    try {
      const ws = await newWorkspace(s);
      const up = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('kept across restarts') });
      const id = expectOk(up, 201).data.id;
      const link = expectOk(await ws.owner.get(`/api/v1/files/${id}`)).data.download_url as string;
      expect(link.startsWith(`https://files.example.test/api/v1/files/${id}/download?`)).to.equal(true);
      const before = await hashOfAbsoluteUrl(reachable(s, link));
      expect(before).to.include({ status: 200, sha256: up.sha256 });
      await s.close();
      s = await startStack(env.config, log);
      const after = await hashOfAbsoluteUrl(reachable(s, link));
      expect(after).to.include({ status: 200, sha256: up.sha256 });
    } finally {
      await s.close();
      await env.cleanup();
    }
  });

  it('refuses the file one byte over the limit', async () => {
    const ws = await newWorkspace();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, size: LIMIT + 1, contentLength: false });
    expectError(up, 413, 'file_too_large');
    expect(await stack().rt.db('files').where({ workspace_id: ws.workspaceId })).to.have.length(0);
    expect(await bucketKeys(stack(), `files/${ws.workspaceId}/`)).to.deep.equal([]);
  });

  it('answers 400 validation_error naming the field when no "file" part is sent', async () => {
    const ws = await newWorkspace();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('x'), field: 'document' });
    expectError(up, 400, 'validation_error');
    expect(up.body.error.message).to.match(/^file: /);
    expect(await stack().rt.db('files').where({ workspace_id: ws.workspaceId })).to.have.length(0);
  });

  it('answers 415 unsupported_media_type to a body that is not multipart', async () => {
    const ws = await newWorkspace();
    const res = await ws.owner.post('/api/v1/files', { file: 'x' });
    expectError(res, 415, 'unsupported_media_type');
  });

  it('answers 401 without a key and stores nothing', async () => {
    const ws = await newWorkspace();
    const up = await uploadFile(stack().url, { key: 'not-a-key', data: Buffer.from('x') });
    expectError(up, 401, 'unauthorized');
    expect(await stack().rt.db('files').where({ workspace_id: ws.workspaceId })).to.have.length(0);
  });

  it('lets every member of the workspace read a file, and nobody else (404)', async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const member = await ws.user();
    const up = await uploadFile(stack().url, { key: member.key, data: Buffer.from('members only') });
    const id = expectOk(up, 201).data.id;
    expectOk(await ws.owner.get(`/api/v1/files/${id}`));
    expectError(await other.owner.get(`/api/v1/files/${id}`), 404, 'not_found');
    expectError(await ws.owner.get('/api/v1/files/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    expectError(await ws.owner.get('/api/v1/files/not-an-id'), 404, 'not_found');
  });

  it('drops bidi control characters from file names (a name that reads backwards hides its real extension)', async () => {
    const ws = await newWorkspace();
    for (const [sent, kept] of [
      ['invoice\u202Etxt.exe', 'invoicetxt.exe'],
      ['a\u2066b\u2067c\u2068d\u2069.pdf', 'abcd.pdf'],
      ['\u200Fx\u200E\u202Ay\u202Bz\u202C\u202D\u061C.txt', 'xyz.txt'],
      ['\u202E', 'file'],
    ]) {
      const id = expectOk(await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('x'), name: sent, type: 'text/plain' }), 201).data.id;
      expect(expectOk(await ws.owner.get(`/api/v1/files/${id}`)).data.name, JSON.stringify(sent)).to.equal(kept);
    }
  });

  it('names a non-ASCII file in RFC 5987 form in the download', async () => {
    const ws = await newWorkspace();
    const name = 'résumé "final".txt';
    const id = expectOk(await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('cv'), name, type: 'text/plain' }), 201).data.id;
    const got = expectOk(await ws.owner.get(`/api/v1/files/${id}`)).data;
    expect(got.name).to.equal(name);
    const download = await hashOfUrl(got.download_url);
    expect(download.headers.get('content-disposition')).to.equal(
      `attachment; filename="r_sum_ _final_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt`,
    );
  });
});

describe('file.postprocess (worker)', function () {
  this.timeout(60_000);

  it('sniffs PNG bytes sent as text/plain, reads the dimensions and stores a thumbnail', async () => {
    const ws = await newWorkspace();
    const png = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3366cc' } }).png().toBuffer();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, data: png, name: 'picture.txt', type: 'text/plain' });
    const file = expectOk(up, 201).data;
    expect(file.content_type).to.equal('text/plain'); // claimed, until sniffed
    const ready = await readyFile(ws.ownerKey, file.id);
    expect(ready).to.include({ status: 'ready', content_type: 'image/png', width: 640, height: 480, sha256: up.sha256 });
    const row = await stack().rt.db('files').where({ id: file.id }).first();
    expect(row.thumbnail_key).to.equal(`thumbnails/${ws.workspaceId}/${file.id}.webp`);
    expect(await bucketKeys(stack(), row.thumbnail_key)).to.deep.equal([row.thumbnail_key]);
    // the download is served with the sniffed type
    const download = await hashOfUrl((await ws.owner.get(`/api/v1/files/${file.id}`)).body.data.download_url);
    expect(download.headers.get('content-type')).to.equal('image/png');
  });

  it('does not keep a claimed text type for binary bytes', async () => {
    const ws = await newWorkspace();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from([0, 1, 2, 3, 0, 255, 254]), type: 'text/html' });
    const ready = await readyFile(ws.ownerKey, expectOk(up, 201).data.id);
    expect(ready.content_type).to.equal('application/octet-stream');
  });

  it('keeps a claimed JSON type for text, and never a claimed image type without an image signature', async () => {
    const ws = await newWorkspace();
    const json = await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('{"a":1}'), type: 'application/json' });
    expect((await readyFile(ws.ownerKey, json.body.data.id)).content_type).to.equal('application/json');
    const fake = await uploadFile(stack().url, { key: ws.ownerKey, data: Buffer.from('not really'), type: 'image/png' });
    const ready = await readyFile(ws.ownerKey, fake.body.data.id);
    expect(ready).to.include({ status: 'ready', content_type: 'application/octet-stream', width: null });
  });

  it('marks a decompression bomb failed with a reason and makes no thumbnail', async () => {
    const ws = await newWorkspace();
    // 10,000 x 10,000 = 100 megapixels of one colour: a few hundred KB as PNG
    const bomb = await sharp({ create: { width: 10_000, height: 10_000, channels: 3, background: '#000000' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, data: bomb, name: 'bomb.png', type: 'image/png' });
    const ready = await readyFile(ws.ownerKey, expectOk(up, 201).data.id);
    expect(ready.status).to.equal('failed');
    expect(ready.failure_reason).to.match(/megapixels|pixels/);
    expect(ready.sha256).to.equal(null);
    const row = await stack().rt.db('files').where({ id: ready.id }).first();
    expect(row.thumbnail_key).to.equal(null);
  });

  it('marks a truncated image failed', async () => {
    const ws = await newWorkspace();
    const png = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const up = await uploadFile(stack().url, { key: ws.ownerKey, data: png.subarray(0, 200), name: 'broken.png', type: 'image/png' });
    const ready = await readyFile(ws.ownerKey, expectOk(up, 201).data.id);
    expect(ready).to.include({ status: 'failed', content_type: 'image/png' });
    expect(ready.failure_reason).to.be.a('string').and.not.empty;
  });

  it('announces file.ready to the uploader alone, once', async () => {
    const ws = await newWorkspace();
    const member = await ws.user();
    const up = await uploadFile(stack().url, { key: member.key, data: Buffer.from('ping') });
    const id = expectOk(up, 201).data.id;
    await readyFile(member.key, id);
    const events = await waitFor(async () => {
      const found = await fileEvents(id);
      return found.length ? found : undefined;
    }, 'the file.ready event');
    expect(events).to.have.length(1);
    expect(events[0].to).to.deep.equal({ scope: 'users', workspace_id: ws.workspaceId, user_ids: [member.id] });
    expect(events[0].data.file).to.include({ id, status: 'ready' });
  });
});

async function asResponse(url: URL) {
  const res = await fetch(url);
  return { status: res.status, body: await res.json(), headers: res.headers, text: '' };
}

/** Records the names of the S3 commands the stack sends meanwhile. */
function spyOnS3() {
  const names: string[] = [];
  const s3 = stack().rt.s3;
  const name = `test-spy-${Math.random()}`;
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      names.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { names, stop: () => s3.middlewareStack.remove(name) };
}

/** file.ready events for one file on the run's Redis stream. */
export async function fileEvents(fileId: string) {
  const s = stack();
  return (await busEvents(s)).filter((e) => e.type === 'file.ready' && e.data.file.id === fileId);
}
