// Link previews (contract §14, level 3): the worker fetches up to 3 links of a
// message through the one outbound fetcher and stores `unfurls`, the image
// copied into Axid's storage. Pages are served by the test on 127.0.0.1, so
// the stack that reads them has UNFURL_ALLOW_PRIVATE=true; the level-3 stack
// without it proves such addresses are never fetched.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Queue } from 'bullmq';
import sharp from 'sharp';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { serverLevels } from '../support/client.js';
import { separateStack } from '../support/separate-stack.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { jobId, QUEUE_NAME, queuePrefix } from '../../shared/jobs.js';
import { linksKey, linksToUnfurl } from '../../services/core/unfurls/unfurls.links.js';
import type { Stack } from '../../services/stack.js';

/** A site on 127.0.0.1 that counts what it was asked. */
async function testSite(png: Buffer) {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (path.startsWith('/page')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><head><title>Fallback title</title>
        <meta property="og:title" content="Release 2.0 &amp; more">
        <meta property="og:description" content="What changed in ${path}">
        <meta property="og:site_name" content="Example Site">
        <meta property="og:image" content="${base}/image.png">
        </head><body><p>og:title in the body is not read <meta property="og:title" content="no"></p></body></html>`);
    } else if (path === '/plain') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><head><title> Just a  title </title><meta name="description" content="Meta description"></head><body></body></html>');
    } else if (path === '/image.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(png);
    } else if (path === '/redirect') {
      res.writeHead(302, { location: `${base}/page-target-of-redirect` });
      res.end();
    } else if (path === '/data.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"title":"not a page"}');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { base: `http://127.0.0.1:${port}`, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('link previews (level 3)', function () {
  this.timeout(60_000);
  let png: Buffer;
  let site: Awaited<ReturnType<typeof testSite>>;
  let allowing: Awaited<ReturnType<typeof separateStack>>;
  let s: Stack;
  let ws: TestWorkspace;
  let channelId: string;
  const streams: RawStream[] = [];

  before(async () => {
    png = await sharp({ create: { width: 4, height: 3, channels: 3, background: { r: 200, g: 30, b: 60 } } }).png().toBuffer();
    site = await testSite(png);
    allowing = await separateStack({ FEATURE_LEVEL: '3', UNFURL_ALLOW_PRIVATE: 'true' });
    serverLevels.set(allowing.stack.url, '3');
    s = allowing.stack;
  });
  after(async () => {
    for (const stream of streams.splice(0)) stream.close();
    if (allowing) {
      serverLevels.delete(allowing.stack.url);
      await allowing.stop();
    }
    await site?.close();
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
    channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('links') }), 201).data.id;
  });

  const base = () => `/api/v1/channels/${channelId}/messages`;
  const post = async (content: string) => expectOk(await ws.owner.post(base(), { content }), 201).data;
  const previewsOf = (id: string, count: number) =>
    waitFor(async () => {
      const message = expectOk(await ws.owner.get(`${base()}/${id}`)).data;
      return message.unfurls.length >= count ? message : null;
    }, `${count} previews`);

  it('reads a served page: Open Graph title, description and site name, the image copied to Axid (its bytes), with message.updated', async () => {
    const stream = await openRaw(s.url, ws.ownerKey);
    streams.push(stream);
    const link = `${site.base}/page-one`;
    const posted = await post(`Look at ${link} please`);
    expect(posted.unfurls).to.deep.equal([]);
    const updated = await stream.waitFor((f) => f.event === 'message.updated' && f.data.message.id === posted.id);
    const [preview] = updated.data.message.unfurls;
    expect(preview).to.include({ url: link, title: 'Release 2.0 & more', description: 'What changed in /page-one', site_name: 'Example Site' });
    expect(preview.image_url.startsWith(`${s.rt.config.publicBaseUrl}/api/v1/unfurl-images/`)).to.equal(true);
    expect(preview.image_url).to.not.include('127.0.0.1:' + new URL(site.base).port);
    // The browser loads Axid's copy, with no key (an <img> sends none); the bytes are the page's image.
    // PUBLIC_BASE_URL names the API; the test reaches it at the stack's own address.
    const image = await fetch(s.url + new URL(preview.image_url).pathname);
    expect(image.status).to.equal(200);
    expect(image.headers.get('content-type')).to.equal('image/png');
    expect(image.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(Buffer.from(await image.arrayBuffer()).equals(png)).to.equal(true);
    expect(expectOk(await ws.owner.get(`${base()}/${posted.id}`)).data.unfurls).to.deep.equal([preview]);
    // The history page (rendered by Postgres) carries the same previews byte for byte.
    const page = expectOk(await ws.owner.get(base())).data;
    expect(page.find((m: { id: string }) => m.id === posted.id).unfurls).to.deep.equal([preview]);
  });

  it('takes <title> and meta description where a page has no Open Graph, and an unknown image address gives 404', async () => {
    const posted = await post(`<${site.base}/plain>`);
    const message = await previewsOf(posted.id, 1);
    expect(message.unfurls).to.deep.equal([{ url: `${site.base}/plain`, title: 'Just a title', description: 'Meta description', site_name: null, image_url: null }]);
    expectError(await ws.owner.get(`/api/v1/unfurl-images/${ws.workspaceId}/${'0'.repeat(64)}`), 404, 'not_found');
  });

  it('fetches no link inside a code span or a code block, follows no redirect, and ignores what is not HTML', async () => {
    const real = `${site.base}/page-real`;
    const content = [
      `In code: \`${site.base}/page-in-span\``,
      '```',
      `${site.base}/page-in-block`,
      '```',
      `A redirect ${site.base}/redirect, data ${site.base}/data.json and ${real}`,
    ].join('\n');
    const posted = await post(content);
    const message = await previewsOf(posted.id, 1);
    expect(message.unfurls.map((u: { url: string }) => u.url)).to.deep.equal([real]);
    expect(site.hits.get('/page-in-span')).to.equal(undefined);
    expect(site.hits.get('/page-in-block')).to.equal(undefined);
    expect(site.hits.get('/redirect')).to.equal(1);
    expect(site.hits.get('/page-target-of-redirect')).to.equal(undefined);
    expect(site.hits.get('/data.json')).to.equal(1);
  });

  it('previews at most 3 links, and an edit with new links replaces the previews', async () => {
    const links = [1, 2, 3, 4].map((n) => `${site.base}/page-many-${n}`);
    const posted = await post(links.join(' and '));
    const message = await previewsOf(posted.id, 3);
    expect(message.unfurls.map((u: { url: string }) => u.url)).to.deep.equal(links.slice(0, 3));
    expect(site.hits.get('/page-many-4')).to.equal(undefined);
    const edited = expectOk(await ws.owner.patch(`${base()}/${posted.id}`, { content: `now ${site.base}/page-edited` })).data;
    expect(edited.unfurls).to.deep.equal([]);
    const after = await previewsOf(posted.id, 1);
    expect(after.unfurls.map((u: { url: string }) => u.url)).to.deep.equal([`${site.base}/page-edited`]);
  });

  it('lets the author remove the previews (PATCH unfurls: []), which is no edit; no one else may, and nothing else is taken', async () => {
    const posted = await post(`${site.base}/page-removed`);
    await previewsOf(posted.id, 1);
    const other = await ws.user();
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: other.id }), 201);
    expectError(await other.client.patch(`${base()}/${posted.id}`, { unfurls: [] }), 403, 'forbidden');
    expectError(await ws.owner.patch(`${base()}/${posted.id}`, { unfurls: [{ url: 'https://evil.example' }] }), 400, 'validation_error');
    const removed = expectOk(await ws.owner.patch(`${base()}/${posted.id}`, { unfurls: [] })).data;
    expect(removed.unfurls).to.deep.equal([]);
    expect(removed.edited_at).to.equal(null);
    expect(expectOk(await ws.owner.get(`${base()}/${posted.id}`)).data.unfurls).to.deep.equal([]);
  });
});

describe('link previews without UNFURL_ALLOW_PRIVATE (level 3)', function () {
  this.timeout(60_000);

  it('never connects to a private, loopback, link-local or metadata address, by literal or by name', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('private') }), 201).data.id;
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const queue = new Queue(QUEUE_NAME, { connection: s.rt.redis, prefix: queuePrefix(s.rt.config) });
    try {
      const groups = [
        [`https://127.0.0.1:${port}/a`, `https://localhost:${port}/b`, `https://[::ffff:127.0.0.1]:${port}/c`],
        ['https://169.254.169.254/latest/meta-data/', 'https://10.0.0.1/', 'https://[fd00::1]/'],
        [`https://0.0.0.0:${port}/d`, 'https://192.168.1.1/'],
      ];
      for (const links of groups) {
        const posted = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: links.join(' ') }), 201).data;
        // The job ran (and finished) before anything is asserted.
        const id = jobId('message.unfurl', { messageId: posted.id, linksKey: linksKey(linksToUnfurl(posted.content, false)) });
        await waitFor(async () => (await queue.getJob(id))?.finishedOn, 'the preview job to finish');
        expect(expectOk(await ws.owner.get(`/api/v1/channels/${channelId}/messages/${posted.id}`)).data.unfurls).to.deep.equal([]);
      }
      // Plain http is never fetched without the switch: no job at all.
      expect(linksToUnfurl(`http://127.0.0.1:${port}/e`, false)).to.deep.equal([]);
      expect(connections).to.equal(0);
    } finally {
      await queue.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
