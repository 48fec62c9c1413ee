// Custom emoji (level 3, contract §14): POST /emoji (multipart name + image),
// checked by content (file-type) and size, stored at most 128×128 by the
// worker; GET /emoji; DELETE by its creator, admins and owners; `:name:`
// reactions; emoji.created/emoji.deleted in the audit log.
import { expect } from 'chai';
import sharp from 'sharp';
import type { Stack } from '../../services/stack.js';
import { expectError, expectOk } from '../support/expect.js';
import { waitFor } from '../support/files.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Response } from '../support/client.js';

async function postEmoji(s: Stack, key: string, name: string | undefined, image: Buffer | undefined, filename = 'e.png', type = 'image/png'): Promise<Response> {
  const form = new FormData();
  if (name !== undefined) form.append('name', name);
  if (image) form.append('image', new Blob([new Uint8Array(image)], { type }), filename);
  const res = await fetch(`${s.url}/api/v1/emoji`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text, headers: res.headers, expectedLevel: '3' };
}

const png = (width: number, height: number) => sharp({ create: { width, height, channels: 4, background: { r: 200, g: 30, b: 90, alpha: 1 } } }).png().toBuffer();

describe('custom emoji (level 3)', function () {
  this.timeout(60_000);
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
  });

  const ready = (name: string) =>
    waitFor(async () => {
      const found = expectOk(await ws.owner.get('/api/v1/emoji')).data.find((e: { name: string }) => e.name === name);
      return found?.url ? found : undefined;
    }, `emoji ${name} to be stored`);

  it('stores an upload at most 128×128, lists it with a URL needing no key, and takes it as a reaction', async () => {
    const name = `party_${uniqueName('p').replace(/[^a-z0-9_+-]/g, '')}`.slice(0, 64);
    const created = expectOk(await postEmoji(s, ws.ownerKey, name, await png(512, 256)), 201).data;
    expect(created).to.include({ name, created_by: ws.ownerId });
    const listed = await ready(name);
    expect(listed).to.include({ name, created_by: ws.ownerId });
    expect(listed.url.startsWith(`${s.rt.config.publicBaseUrl}/api/v1/emoji-images/`)).to.equal(true);
    const image = await fetch(`${s.url}${new URL(listed.url).pathname}`); // PUBLIC_BASE_URL, on the test stack's own port
    expect(image.status).to.equal(200);
    expect(image.headers.get('content-type')).to.equal('image/webp');
    expect(image.headers.get('x-content-type-options')).to.equal('nosniff');
    const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).to.deep.equal(['webp', 128, 64]);

    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    const message = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: `hello :${name}:` }), 201).data;
    expect(message.content).to.equal(`hello :${name}:`);
    const reaction = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages/${message.id}/reactions`, { emoji: name }), 201).data;
    expect(reaction.emoji).to.equal(name);

    // Another workspace neither lists it nor has the name taken.
    const other = await newWorkspace(s);
    expect(expectOk(await other.owner.get('/api/v1/emoji')).data).to.deep.equal([]);
    expectOk(await postEmoji(s, other.ownerKey, name, await png(16, 16)), 201);
  });

  it('refuses an image too large, of another type (SVG, text renamed .png, a bare header), a bad, standard or taken name', async () => {
    const big = await sharp(Buffer.from(Array.from({ length: 400 * 400 * 3 }, () => Math.floor(Math.random() * 256))), { raw: { width: 400, height: 400, channels: 3 } }).png().toBuffer();
    expect(big.length).to.be.greaterThan(256 * 1024);
    expectError(await postEmoji(s, ws.ownerKey, 'big', big), 413, 'file_too_large');
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');
    expectError(await postEmoji(s, ws.ownerKey, 'vector', svg, 'e.svg', 'image/svg+xml'), 415, 'unsupported_media_type');
    expectError(await postEmoji(s, ws.ownerKey, 'vector2', svg, 'e.png', 'image/png'), 415, 'unsupported_media_type');
    expectError(await postEmoji(s, ws.ownerKey, 'text', Buffer.from('just some words, not an image'), 'e.png', 'image/png'), 415, 'unsupported_media_type');
    const bmp = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#fff' } }).tiff().toBuffer();
    expectError(await postEmoji(s, ws.ownerKey, 'tiff', bmp, 'e.png', 'image/png'), 415, 'unsupported_media_type');
    const small = await png(8, 8);
    for (const bad of ['', 'Upper', 'has space', 'x'.repeat(65), 'émoji', '../x']) {
      expectError(await postEmoji(s, ws.ownerKey, bad, small), 400, 'validation_error');
    }
    expectError(await postEmoji(s, ws.ownerKey, undefined, small), 400, 'validation_error');
    expectError(await postEmoji(s, ws.ownerKey, 'noimage', undefined), 400, 'validation_error');
    for (const standard of ['thumbsup', '+1', 'tada', 'smile']) expectError(await postEmoji(s, ws.ownerKey, standard, small), 400, 'validation_error');
    expectOk(await postEmoji(s, ws.ownerKey, 'mine', small), 201);
    expectError(await postEmoji(s, ws.ownerKey, 'mine', small), 409, 'name_taken');
    // Nothing refused was kept.
    const names = (await s.rt.db('custom_emoji').where({ workspace_id: ws.workspaceId })).map((r) => r.name);
    expect(names).to.deep.equal(['mine']);
  });

  it('is deleted by its creator, an admin or an owner, not another member; both are audited', async () => {
    const member = await ws.user();
    const other = await ws.user();
    const admin = await ws.user({ role: 'admin' });
    const small = await png(8, 8);
    for (const n of ['by_creator', 'by_admin', 'by_owner']) expectOk(await postEmoji(s, member.key, n, small), 201);
    expectError(await other.client.delete('/api/v1/emoji/by_creator'), 403, 'forbidden');
    expect((await member.client.delete('/api/v1/emoji/by_creator')).status).to.equal(204);
    expect((await admin.client.delete('/api/v1/emoji/by_admin')).status).to.equal(204);
    expect((await ws.owner.delete('/api/v1/emoji/by_owner')).status).to.equal(204);
    expectError(await ws.owner.delete('/api/v1/emoji/by_owner'), 404, 'not_found');
    expect(await s.rt.db('custom_emoji').where({ workspace_id: ws.workspaceId })).to.deep.equal([]);

    const audit = await s.rt.db('audit_log').where({ workspace_id: ws.workspaceId }).whereIn('action', ['emoji.created', 'emoji.deleted']);
    expect(audit.map((a) => [a.action, a.actor_id, a.details.name])).to.have.deep.members([
      ['emoji.created', member.id, 'by_creator'],
      ['emoji.created', member.id, 'by_admin'],
      ['emoji.created', member.id, 'by_owner'],
      ['emoji.deleted', member.id, 'by_creator'],
      ['emoji.deleted', admin.id, 'by_admin'],
      ['emoji.deleted', ws.ownerId, 'by_owner'],
    ]);
  });
});
