// Edit history (level 3, contract §9): each edit keeps the earlier version;
// GET .../messages/{id}/edits lists them newest first to whoever can read the message.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Stack } from '../../services/stack.js';

describe('edit history (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
  });
  const newChannel = async (isPrivate = false) =>
    expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;

  it('keeps every earlier version, newest first, with who wrote it and when, and pages through them without repeats', async () => {
    const channelId = await newChannel();
    const base = `/api/v1/channels/${channelId}/messages`;
    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'v0' }] }] };
    const created = expectOk(await ws.owner.post(base, { content: 'v0', content_json: doc, metadata: { type: 't', data: { n: 0 } } }), 201).data;
    expect(expectOk(await ws.owner.get(`${base}/${created.id}/edits`)).data).to.deep.equal([]);
    const edits: string[] = [];
    for (let i = 1; i <= 4; i++) edits.push(expectOk(await ws.owner.patch(`${base}/${created.id}`, { content: `v${i}` })).data.edited_at);
    const all = expectOk(await ws.owner.get(`${base}/${created.id}/edits`));
    expect(all.data.map((v: { content: string }) => v.content)).to.deep.equal(['v3', 'v2', 'v1', 'v0']);
    expect(all.pagination).to.deep.equal({ next_cursor: null, has_more: false });
    // Each version says when it was written: the first one when the message was posted.
    expect(all.data.map((v: { edited_at: string }) => v.edited_at)).to.deep.equal([edits[2], edits[1], edits[0], created.created_at]);
    expect(all.data[3]).to.deep.equal({ content: 'v0', content_json: doc, metadata: { type: 't', data: { n: 0 } }, edited_at: created.created_at, editor_id: ws.ownerId });
    expect(expectOk(await ws.owner.get(`${base}/${created.id}`)).data.content).to.equal('v4');

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = expectOk(await ws.owner.get(`${base}/${created.id}/edits?limit=3${cursor ? `&cursor=${cursor}` : ''}`));
      seen.push(...page.data.map((v: { content: string }) => v.content));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    expect(seen).to.deep.equal(['v3', 'v2', 'v1', 'v0']);
  });

  it('is visible like the message: a reader of a public channel sees it; outsiders of private channels and DMs get 404', async () => {
    const reader = await ws.user();
    const member = await ws.user();
    const publicId = await newChannel();
    const inPublic = expectOk(await ws.owner.post(`/api/v1/channels/${publicId}/messages`, { content: 'a' }), 201).data;
    expectOk(await ws.owner.patch(`/api/v1/channels/${publicId}/messages/${inPublic.id}`, { content: 'b' }));
    expect(expectOk(await reader.client.get(`/api/v1/channels/${publicId}/messages/${inPublic.id}/edits`)).data).to.have.length(1);

    const privateId = await newChannel(true);
    const inPrivate = expectOk(await ws.owner.post(`/api/v1/channels/${privateId}/messages`, { content: 'secret' }), 201).data;
    expectOk(await ws.owner.patch(`/api/v1/channels/${privateId}/messages/${inPrivate.id}`, { content: 'secret 2' }));
    expectError(await reader.client.get(`/api/v1/channels/${privateId}/messages/${inPrivate.id}/edits`), 404, 'not_found');

    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [member.id] }), 201).data;
    const inDm = expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: 'dm 1' }), 201).data;
    expectOk(await ws.owner.patch(`/api/v1/dms/${dm.id}/messages/${inDm.id}`, { content: 'dm 2' }));
    expect(expectOk(await member.client.get(`/api/v1/dms/${dm.id}/messages/${inDm.id}/edits`)).data.map((v: { content: string }) => v.content)).to.deep.equal(['dm 1']);
    expectError(await reader.client.get(`/api/v1/dms/${dm.id}/messages/${inDm.id}/edits`), 404, 'not_found');
    // The other kind's path, another channel's message, an unknown id: 404.
    expectError(await member.client.get(`/api/v1/channels/${dm.id}/messages/${inDm.id}/edits`), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/channels/${publicId}/messages/${inPrivate.id}/edits`), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/channels/${publicId}/messages/00000000-0000-4000-8000-000000000000/edits`), 404, 'not_found');
  });

  it('deletes the history with the message', async () => {
    const channelId = await newChannel();
    const m = expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'a' }), 201).data;
    expectOk(await ws.owner.patch(`/api/v1/channels/${channelId}/messages/${m.id}`, { content: 'b' }));
    expect(await s.rt.db('message_edits').where({ message_id: m.id }).count('* as n').first()).to.deep.equal({ n: 1 });
    expectOk(await ws.owner.delete(`/api/v1/channels/${channelId}/messages/${m.id}`), 204);
    expect(await s.rt.db('message_edits').where({ message_id: m.id }).count('* as n').first()).to.deep.equal({ n: 0 });
    expectError(await ws.owner.get(`/api/v1/channels/${channelId}/messages/${m.id}/edits`), 404, 'not_found');
  });
});
