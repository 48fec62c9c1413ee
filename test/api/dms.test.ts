import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { messagesUrl, postMessage, waitForEvents } from '../support/conversations.js';
import { newWorkspace, stack } from '../support/stack.js';

const countConversations = async (workspaceId: string) =>
  Number((await stack().rt.db('channels').where({ workspace_id: workspaceId }).whereNot('kind', 'channel').count<{ c: string }>('* as c').first())?.c);

describe('POST /dms', () => {
  it('opens a 1:1 DM (201) with the caller included, then returns the same one (200)', async () => {
    const ws = await newWorkspace();
    const u = await ws.user();
    const first = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [u.id] }), 201).data;
    expect(first).to.have.all.keys('id', 'kind', 'member_ids', 'created_at');
    expect(first.kind).to.equal('dm');
    expect([...first.member_ids].sort()).to.deep.equal([ws.ownerId, u.id].sort());
    const again = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [u.id] }), 200).data;
    expect(again).to.deep.equal(first);
    // The other side opening it finds the same conversation.
    expect(expectOk(await u.client.post('/api/v1/dms', { user_ids: [ws.ownerId] }), 200).data.id).to.equal(first.id);
    const [e] = await waitForEvents((x) => x.type === 'dm.created' && x.data.conversation.id === first.id);
    expect(e!.to.scope).to.equal('users');
    expect([...e!.to.user_ids!].sort()).to.deep.equal([ws.ownerId, u.id].sort());
    expect(e!.data.conversation).to.deep.equal({ id: first.id, kind: 'dm', member_ids: first.member_ids });
  });

  it('opens a group DM with agents; order, duplicates and the caller\'s own id do not matter', async () => {
    const ws = await newWorkspace();
    const a = await ws.user();
    const bot = await ws.user({ is_agent: true });
    const g = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [a.id, bot.id] }), 201).data;
    expect(g.kind).to.equal('group_dm');
    expect(g.member_ids).to.have.length(3);
    const same = expectOk(await bot.client.post('/api/v1/dms', { user_ids: [ws.ownerId, a.id, a.id, bot.id] }), 200).data;
    expect(same.id).to.equal(g.id);
  });

  it('is race-safe: concurrent opens give one conversation', async () => {
    const ws = await newWorkspace();
    const u = await ws.user();
    const results = await Promise.all(Array.from({ length: 8 }, () => ws.owner.post('/api/v1/dms', { user_ids: [u.id] })));
    expect(new Set(results.map((r) => r.body.data.id)).size).to.equal(1);
    expect(results.filter((r) => r.status === 201)).to.have.length(1);
    expect(results.filter((r) => r.status === 200)).to.have.length(7);
    expect(await countConversations(ws.workspaceId)).to.equal(1);
  });

  it('accepts 8 other users and refuses 9, none, or only the caller, with 400 validation_error', async () => {
    const ws = await newWorkspace();
    const users = [];
    for (let i = 0; i < 9; i++) users.push(await ws.user({ is_agent: i % 2 === 0 }));
    expectOk(await ws.owner.post('/api/v1/dms', { user_ids: users.slice(0, 8).map((u) => u.id) }), 201);
    for (const user_ids of [users.map((u) => u.id), [], [ws.ownerId], 'x', ['nope'], undefined]) {
      const res = await ws.owner.post('/api/v1/dms', { user_ids });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/user_ids/);
    }
    expect(await countConversations(ws.workspaceId)).to.equal(1);
  });

  it('answers 404 not_found naming User for an unknown, removed or foreign user', async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const u = await ws.user();
    const gone = await ws.user();
    expectOk(await ws.owner.delete(`/api/v1/workspaces/current/members/${gone.id}`), 204);
    for (const id of ['00000000-0000-4000-8000-000000000000', gone.id, other.ownerId]) {
      const res = await ws.owner.post('/api/v1/dms', { user_ids: [u.id, id] });
      expectError(res, 404, 'not_found');
      expect(res.body.error.message).to.match(/User/);
    }
    expect(await countConversations(ws.workspaceId)).to.equal(0);
  });
});

describe('GET /dms and GET /dms/:id', () => {
  it('lists the caller\'s conversations newest first, paginated, and nobody else\'s', async () => {
    const ws = await newWorkspace();
    const a = await ws.user();
    const b = await ws.user();
    const d1 = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [a.id] }), 201).data;
    const d2 = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [a.id, b.id] }), 201).data;
    const d3 = expectOk(await a.client.post('/api/v1/dms', { user_ids: [b.id] }), 201).data;
    const p1 = expectOk(await ws.owner.get('/api/v1/dms?limit=1'));
    const p2 = expectOk(await ws.owner.get(`/api/v1/dms?limit=1&cursor=${p1.pagination.next_cursor}`));
    expect([...p1.data, ...p2.data].map((d: { id: string }) => d.id)).to.deep.equal([d2.id, d1.id]);
    expect(p2.pagination.has_more).to.equal(false);
    expect(expectOk(await b.client.get('/api/v1/dms')).data.map((d: { id: string }) => d.id)).to.deep.equal([d3.id, d2.id]);
    expect(expectOk(await ws.owner.get(`/api/v1/dms/${d1.id}`)).data).to.deep.equal(d1);
  });

  it('hides a conversation from non-members and channel ids from /dms with the same 404', async () => {
    const ws = await newWorkspace();
    const a = await ws.user();
    const outsider = await ws.user();
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [a.id] }), 201).data;
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: 'pub' }), 201).data;
    const hidden = await outsider.client.get(`/api/v1/dms/${dm.id}`);
    const missing = await outsider.client.get('/api/v1/dms/00000000-0000-4000-8000-000000000000');
    expectError(hidden, 404, 'not_found');
    expect(hidden.body).to.deep.equal(missing.body);
    expectError(await ws.owner.get(`/api/v1/dms/${channel.id}`), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/dms/${channel.id}/messages`), 404, 'not_found');
  });
});

describe('DM messages', () => {
  it('posts and lists DM messages with the channel rules (threads, limits, newest first)', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [bot.id] }), 201).data;
    const m1 = await postMessage(ws.owner, dm.id, 'hello bot', 'dms');
    const m2 = await postMessage(bot.client, dm.id, { content: 'hello human', metadata: { type: 'bot.reply', data: {} } }, 'dms');
    const reply = await postMessage(bot.client, dm.id, { content: 'in thread', thread_id: m1.id }, 'dms');
    expect(m1.channel_id).to.equal(dm.id);
    const list = expectOk(await bot.client.get(messagesUrl(dm.id, 'dms'))).data;
    expect(list.map((m: { id: string }) => m.id)).to.deep.equal([m2.id, m1.id]);
    expect(list[1].thread.reply_count).to.equal(1);
    const replies = expectOk(await ws.owner.get(`${messagesUrl(dm.id, 'dms')}?thread_id=${m1.id}`)).data;
    expect(replies.map((m: { id: string }) => m.id)).to.deep.equal([reply.id]);
    expectError(await ws.owner.post(messagesUrl(dm.id, 'dms'), { content: '' }), 400, 'validation_error');
    await waitForEvents((e) => e.type === 'message.created' && e.data.message.id === m2.id && e.to.channel_id === dm.id);
  });

  it('answers 404 to a non-member on every DM message route, changing nothing', async () => {
    const ws = await newWorkspace();
    const a = await ws.user();
    const outsider = await ws.user({ role: 'admin' });
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [a.id] }), 201).data;
    const m = await postMessage(ws.owner, dm.id, 'private', 'dms');
    const base = messagesUrl(dm.id, 'dms');
    const responses = [
      await outsider.client.get(base),
      await outsider.client.post(base, { content: 'x' }),
      await outsider.client.get(`${base}/${m.id}`),
      await outsider.client.patch(`${base}/${m.id}`, { content: 'x' }),
      await outsider.client.delete(`${base}/${m.id}`),
      await outsider.client.post(`${base}/${m.id}/reactions`, { emoji: 'x' }),
      await outsider.client.delete(`${base}/${m.id}/reactions/x`),
      await outsider.client.get(`/api/v1/dms/${dm.id}`),
      await outsider.client.post(`/api/v1/dms/${dm.id}/typing`),
    ];
    for (const res of responses) {
      expectError(res, 404, 'not_found');
      expect(res.body).to.deep.equal(responses[0]!.body);
    }
    expect(expectOk(await ws.owner.get(`${base}/${m.id}`)).data).to.deep.include({ content: 'private', edited_at: null, reactions: [] });
  });
});
