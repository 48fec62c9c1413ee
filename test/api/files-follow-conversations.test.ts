// Files follow their conversations (level 3, contract §17): who reads a file
// (its uploader; readers, now, of a conversation where a message carrying it
// was posted), DELETE /files/{id}, messages showing a removed file, and a
// file removed with the last message that carried it. Level 2 keeps §4's rule
// (test/api/files.test.ts, unchanged, and the last block here).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { bucketKeys, hashOfUrl, reachable, uploadFile, waitFor } from '../support/files.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import { Client } from '../support/client.js';
import type { Stack } from '../../services/stack.js';

type User = Awaited<ReturnType<TestWorkspace['user']>>;

const carrying = (file: { id: string; name: string }) => ({
  content: `Shared a file: ${file.name}`,
  metadata: { type: 'axid.file', data: { file_id: file.id, name: file.name, size: 5, content_type: 'text/plain' } },
});

async function upload(s: Stack, key: string, name = 'notes.txt') {
  const res = await uploadFile(s.url, { key, data: Buffer.from(`${name}\n`), name, type: 'text/plain' });
  return expectOk({ ...res, expectedLevel: '3' }, 201).data as { id: string; name: string };
}

describe('files follow their conversations (level 3)', function () {
  this.timeout(60_000);
  const open: RawStream[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  let s: Stack;
  let ws: TestWorkspace;
  let alice: User;
  let bob: User;
  let carol: User;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
    [alice, bob, carol] = [await ws.user(), await ws.user(), await ws.user()];
  });
  const channel = async (by: User, isPrivate: boolean, members: User[] = []) => {
    const id = expectOk(await by.client.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;
    for (const m of members) expectOk(await by.client.post(`/api/v1/channels/${id}/members`, { user_id: m.id }), 201);
    return id;
  };
  const reads = async (who: Client, fileId: string) => {
    const res = await who.get(`/api/v1/files/${fileId}`);
    if (res.status === 404) {
      expectError(res, 404, 'not_found');
      return false;
    }
    const file = expectOk(res).data;
    // The link works, and lives at most 15 minutes.
    const expires = Number(new URL(file.download_url).searchParams.get('expires'));
    expect(expires - Date.now() / 1000).to.be.within(0, 15 * 60 + 1);
    expect((await hashOfUrl(reachable(s, file.download_url))).status).to.equal(200);
    return true;
  };

  it('is read by its uploader alone until posted, then by whoever reads a conversation carrying it, now', async () => {
    const file = await upload(s, alice.key);
    expect(await reads(alice.client, file.id)).to.equal(true);
    for (const who of [bob.client, carol.client, ws.owner]) expect(await reads(who, file.id), 'posted nowhere').to.equal(false);

    // A private channel: its members read it, others do not.
    const secret = await channel(alice, true, [bob]);
    expectOk(await alice.client.post(`/api/v1/channels/${secret}/messages`, carrying(file)), 201);
    expect(await reads(bob.client, file.id)).to.equal(true);
    expect(await reads(carol.client, file.id)).to.equal(false);
    // Now: a member who leaves no longer reads it.
    expectOk(await bob.client.delete(`/api/v1/channels/${secret}/members/${bob.id}`), 204);
    expect(await reads(bob.client, file.id)).to.equal(false);

    // A DM: its members.
    const dm = expectOk(await alice.client.post('/api/v1/dms', { user_ids: [carol.id] }), 201).data.id as string;
    expectOk(await alice.client.post(`/api/v1/dms/${dm}/messages`, carrying(file)), 201);
    expect(await reads(carol.client, file.id)).to.equal(true);
    expect(await reads(bob.client, file.id)).to.equal(false);

    // A public channel: everyone who can read it, members or not.
    const open = await channel(alice, false);
    expectOk(await alice.client.post(`/api/v1/channels/${open}/messages`, carrying(file)), 201);
    expect(await reads(bob.client, file.id)).to.equal(true);
    expect(await reads((await newWorkspace(s)).owner, file.id), 'another workspace').to.equal(false);
  });

  it('refuses a message carrying a file its author cannot read (post, edit, hook): 400, nothing posted, still unreadable', async () => {
    const file = await upload(s, alice.key);
    const shared = await channel(bob, false, [carol]);
    const base = `/api/v1/channels/${shared}/messages`;
    const before = expectOk(await bob.client.get(base)).data.length;
    for (const body of [carrying(file), { content: 'x', metadata: { type: 'axid.file', data: { file_id: 42 } } }, carrying({ id: '00000000-0000-4000-8000-000000000000', name: 'x' })]) {
      const res = await bob.client.post(base, body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/^metadata\.data\.file_id: /);
    }
    const mine = expectOk(await bob.client.post(base, { content: 'mine' }), 201).data;
    expectError(await bob.client.patch(`${base}/${mine.id}`, { metadata: carrying(file).metadata }), 400, 'validation_error');
    const hook = expectOk(await bob.client.post('/api/v1/webhooks/incoming', { channel_id: shared, name: 'CI' }), 201).data;
    expectError(await new Client(s.url).post(`/hooks/${hook.id}`, carrying(file)), 400, 'validation_error');
    expect(expectOk(await bob.client.get(base)).data.length).to.equal(before + 1);
    expect(expectOk(await bob.client.get(`${base}/${mine.id}`)).data.metadata).to.equal(null);
    expect(await reads(carol.client, file.id)).to.equal(false);
    // Someone who reads it may pass it on.
    const secret = await channel(alice, true, [bob]);
    expectOk(await alice.client.post(`/api/v1/channels/${secret}/messages`, carrying(file)), 201);
    expectOk(await bob.client.post(base, carrying(file)), 201);
    expect(await reads(carol.client, file.id)).to.equal(true);
  });

  it('DELETE /files/{id}: its uploader, owners and admins; others 403 (or 404 when hidden); the object goes and carrying messages show it removed', async () => {
    const admin = await ws.user({ role: 'admin' });
    const room = await channel(alice, false, [bob, carol]);
    const base = `/api/v1/channels/${room}/messages`;
    const file = await upload(s, alice.key);
    const key = `files/${ws.workspaceId}/${file.id}`;
    expect(await bucketKeys(s, key)).to.deep.equal([key]);
    const posted = [
      expectOk(await alice.client.post(base, carrying(file)), 201).data,
      expectOk(await bob.client.post(base, carrying(file)), 201).data,
    ];
    const watcher = await openRaw(s.url, carol.key);
    open.push(watcher);
    const link = expectOk(await alice.client.get(`/api/v1/files/${file.id}`)).data.download_url as string;

    expectError(await bob.client.delete(`/api/v1/files/${file.id}`), 403, 'forbidden');
    const unposted = await upload(s, alice.key, 'draft.txt');
    expectError(await bob.client.delete(`/api/v1/files/${unposted.id}`), 404, 'not_found');
    expectError(await (await newWorkspace(s)).owner.delete(`/api/v1/files/${file.id}`), 404, 'not_found');
    expectError(await alice.client.delete('/api/v1/files/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    expect(await reads(bob.client, file.id)).to.equal(true);

    expectOk(await alice.client.delete(`/api/v1/files/${file.id}`), 204);
    expect(await reads(alice.client, file.id)).to.equal(false);
    expectError(await alice.client.delete(`/api/v1/files/${file.id}`), 404, 'not_found');
    expect((await hashOfUrl(reachable(s, link))).status).to.equal(404);
    await waitFor(async () => (await bucketKeys(s, key)).length === 0, 'the stored object to be removed');
    const removed = { type: 'axid.file', data: { file_id: file.id, removed: true } };
    for (const m of posted) {
      const now = expectOk(await carol.client.get(`${base}/${m.id}`)).data;
      expect(now.metadata).to.deep.equal(removed);
      expect(now).to.include({ content: m.content, edited_at: null });
      const frame = await watcher.waitFor((f) => f.event === 'message.updated' && f.data.message.id === m.id);
      expect(frame.data.message).to.deep.equal(now);
    }
    // Owners and admins delete anyone's file, posted or not.
    expectOk(await admin.client.delete(`/api/v1/files/${unposted.id}`), 204);
    const another = await upload(s, bob.key);
    expectOk(await ws.owner.delete(`/api/v1/files/${another.id}`), 204);
    expect(await reads(bob.client, another.id)).to.equal(false);
  });

  it('removes a file with the last message that carried it (a reply going with its root included), and not before', async () => {
    const room = await channel(alice, false);
    const base = `/api/v1/channels/${room}/messages`;
    const file = await upload(s, alice.key);
    const key = `files/${ws.workspaceId}/${file.id}`;
    const first = expectOk(await alice.client.post(base, carrying(file)), 201).data;
    const second = expectOk(await alice.client.post(base, carrying(file)), 201).data;
    expectOk(await alice.client.delete(`${base}/${first.id}`), 204);
    expect(await reads(alice.client, file.id), 'one carrier left').to.equal(true);
    expectOk(await ws.owner.delete(`${base}/${second.id}`), 204);
    expect(await reads(alice.client, file.id), 'the last carrier gone').to.equal(false);
    await waitFor(async () => (await bucketKeys(s, key)).length === 0, 'the stored object to be removed');
    // The embedded store keeps the emptied folder: an upload into it at that moment would otherwise open its file in a removed folder and end the process.
    expect(existsSync(path.join(s.rt.config.dataDir, 's3', s.rt.config.s3.bucket, 'files', ws.workspaceId))).to.equal(true);

    // A reply carrying a file goes with its root, and the file with it.
    const inThread = await upload(s, alice.key);
    const root = expectOk(await alice.client.post(base, { content: 'thread' }), 201).data;
    expectOk(await alice.client.post(base, { ...carrying(inThread), thread_id: root.id }), 201);
    expectOk(await alice.client.delete(`${base}/${root.id}`), 204);
    expect(await reads(alice.client, inThread.id)).to.equal(false);

    // A file posted nowhere is not touched by deletes of other messages.
    const kept = await upload(s, alice.key);
    const plain = expectOk(await alice.client.post(base, { content: 'plain' }), 201).data;
    expectOk(await alice.client.delete(`${base}/${plain.id}`), 204);
    expect(await reads(alice.client, kept.id)).to.equal(true);
  });

  it('keeps a file that is someone’s avatar readable by the workspace, as a profile is', async () => {
    const picture = await upload(s, alice.key, 'me.png');
    expect(await reads(bob.client, picture.id)).to.equal(false);
    expectOk(await alice.client.patch('/api/v1/users/me', { avatar_url: `https://chat.example.com/api/v1/files/${picture.id}` }));
    expect(await reads(bob.client, picture.id)).to.equal(true);
    expect(await reads((await newWorkspace(s)).owner, picture.id)).to.equal(false);
  });
});

describe('files at level 2 (contract §4, unchanged)', () => {
  it('lets any member read any file, posted or not; a message may carry any id; DELETE /files/{id} does not exist; deleting messages keeps files', async () => {
    const ws = await newWorkspace();
    const [alice, bob] = [await ws.user(), await ws.user()];
    const file = expectOk(await uploadFile(stack().url, { key: alice.key, data: Buffer.from('x'), name: 'x.txt', type: 'text/plain' }), 201).data;
    expectOk(await bob.client.get(`/api/v1/files/${file.id}`));
    const c = expectOk(await bob.client.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    const m = expectOk(await bob.client.post(`/api/v1/channels/${c}/messages`, carrying(file)), 201).data;
    expectOk(await bob.client.post(`/api/v1/channels/${c}/messages`, carrying({ id: '00000000-0000-4000-8000-000000000000', name: 'none' })), 201);
    expectError(await alice.client.delete(`/api/v1/files/${file.id}`), 404, 'not_found');
    expectOk(await bob.client.delete(`/api/v1/channels/${c}/messages/${m.id}`), 204);
    expectOk(await bob.client.get(`/api/v1/files/${file.id}`));
  });
});
