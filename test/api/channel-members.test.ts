import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, waitForEvents } from '../support/conversations.js';
import { newWorkspace, stack } from '../support/stack.js';

const memberIds = async (channelId: string) =>
  (await stack().rt.db('channel_members').where({ channel_id: channelId }).orderBy('seq').select('user_id')).map((r) => r.user_id as string);

describe('POST /channels/:id/members (the seven rules of "Adding a member")', () => {
  it('rule 1: answers 201 with the ChannelMember record {channel_id, user_id, created_at, user} and emits channel.member_added', async () => {
    const ws = await newWorkspace();
    const target = await ws.user();
    const c = await createChannel(ws.owner);
    const m = expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: target.id }), 201).data;
    expect(m).to.have.all.keys('channel_id', 'user_id', 'created_at', 'user');
    expect(m.channel_id).to.equal(c.id);
    expect(m.user_id).to.equal(target.id);
    expect(m.user).to.include({ id: target.id, role: 'member', is_agent: false });
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId, target.id]);
    const [e] = await waitForEvents((x) => x.type === 'channel.member_added' && x.data.channel_id === c.id && x.data.user_id === target.id);
    expect(e!.to).to.deep.include({ scope: 'channel', channel_id: c.id, user_ids: [target.id] });
  });

  it('rule 2: an agent adds itself to a public channel with its own key', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    const c = await createChannel(ws.owner);
    expectOk(await bot.client.post(`/api/v1/channels/${c.id}/members`, { user_id: bot.id }), 201);
    expect(await memberIds(c.id)).to.include(bot.id);
  });

  it('rule 2 (decision): any workspace member may add someone else to a public channel', async () => {
    const ws = await newWorkspace();
    const a = await ws.user();
    const b = await ws.user();
    const c = await createChannel(ws.owner);
    expectOk(await a.client.post(`/api/v1/channels/${c.id}/members`, { user_id: b.id }), 201);
  });

  it('rule 3: an agent cannot join a private channel by itself; any existing member (role member) can add it', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    const plain = await ws.user();
    const c = await createChannel(ws.owner, { is_private: true });
    expectError(await bot.client.post(`/api/v1/channels/${c.id}/members`, { user_id: bot.id }), 404, 'not_found');
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId]);
    expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: plain.id }), 201);
    expectOk(await plain.client.post(`/api/v1/channels/${c.id}/members`, { user_id: bot.id }), 201);
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId, plain.id, bot.id]);
  });

  it('rule 4: a non-member of a private channel gets the same 404 not_found as for a channel that does not exist', async () => {
    const ws = await newWorkspace();
    const outsider = await ws.user();
    const target = await ws.user();
    const c = await createChannel(ws.owner, { is_private: true });
    const hidden = await outsider.client.post(`/api/v1/channels/${c.id}/members`, { user_id: target.id });
    const missing = await outsider.client.post('/api/v1/channels/00000000-0000-4000-8000-000000000000/members', { user_id: target.id });
    expectError(hidden, 404, 'not_found');
    expectError(missing, 404, 'not_found');
    expect(hidden.body).to.deep.equal(missing.body);
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId]);
  });

  it('rule 5: a missing or malformed user_id answers 400 validation_error', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    for (const body of [{}, { user_id: '' }, { user_id: 'abc' }, { user_id: 12 }, { user_id: null }]) {
      const res = await ws.owner.post(`/api/v1/channels/${c.id}/members`, body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/user_id/);
    }
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId]);
  });

  it('rule 6: a target that is not a workspace member answers 404 not_found naming User', async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const removed = await ws.user();
    expectOk(await ws.owner.delete(`/api/v1/workspaces/current/members/${removed.id}`), 204);
    const c = await createChannel(ws.owner);
    for (const userId of [other.ownerId, removed.id, '00000000-0000-4000-8000-000000000000']) {
      const res = await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: userId });
      expectError(res, 404, 'not_found');
      expect(res.body.error.message).to.match(/User/);
    }
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId]);
  });

  it('rule 7: a target already in the channel answers 409 already_member', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    expectError(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: ws.ownerId }), 409, 'already_member');
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId]);
  });
});

describe('GET /channels/:id/members', () => {
  it('lists members with their users, paginated', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const users = [await ws.user(), await ws.user()];
    for (const u of users) expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: u.id }), 201);
    const first = expectOk(await ws.owner.get(`/api/v1/channels/${c.id}/members?limit=2`));
    expect(first.pagination.has_more).to.equal(true);
    const second = expectOk(await ws.owner.get(`/api/v1/channels/${c.id}/members?limit=2&cursor=${first.pagination.next_cursor}`));
    expect(second.pagination).to.deep.equal({ next_cursor: null, has_more: false });
    const ids = [...first.data, ...second.data].map((m: { user_id: string; user: { id: string } }) => {
      expect(m.user.id).to.equal(m.user_id);
      return m.user_id;
    });
    expect(ids).to.deep.equal([ws.ownerId, users[0]!.id, users[1]!.id]);
  });
});

describe('DELETE /channels/:id/members/:user_id', () => {
  it('lets a member leave (204) and emits channel.member_removed addressed to them too', async () => {
    const ws = await newWorkspace();
    const u = await ws.user();
    const c = await createChannel(ws.owner);
    expectOk(await u.client.post(`/api/v1/channels/${c.id}/members`, { user_id: u.id }), 201);
    expectOk(await u.client.delete(`/api/v1/channels/${c.id}/members/${u.id}`), 204);
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId]);
    const [e] = await waitForEvents((x) => x.type === 'channel.member_removed' && x.data.channel_id === c.id);
    expect(e!.to.user_ids).to.deep.equal([u.id]);
  });

  it('lets the creator of a public channel take out again a member they added; an admin removes anyone; a non-member gets 403 forbidden', async () => {
    const ws = await newWorkspace();
    const creator = await ws.user();
    const a = await ws.user();
    const b = await ws.user();
    const outsider = await ws.user();
    const admin = await ws.user({ role: 'admin' });
    const c = await createChannel(creator.client);
    for (const u of [a, b]) expectOk(await creator.client.post(`/api/v1/channels/${c.id}/members`, { user_id: u.id }), 201);
    expectError(await outsider.client.delete(`/api/v1/channels/${c.id}/members/${b.id}`), 403, 'forbidden');
    expect(await memberIds(c.id)).to.include(b.id);
    expectOk(await creator.client.delete(`/api/v1/channels/${c.id}/members/${a.id}`), 204);
    expect(await memberIds(c.id)).not.to.include(a.id);
    expectOk(await admin.client.delete(`/api/v1/channels/${c.id}/members/${b.id}`), 204);
    expect(await memberIds(c.id)).to.deep.equal([creator.id]);
  });

  it('lets any member of a private channel remove another member', async () => {
    const ws = await newWorkspace();
    const a = await ws.user();
    const b = await ws.user();
    const c = await createChannel(ws.owner, { is_private: true });
    for (const u of [a, b]) expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: u.id }), 201);
    expectOk(await a.client.delete(`/api/v1/channels/${c.id}/members/${b.id}`), 204);
    expect(await memberIds(c.id)).to.deep.equal([ws.ownerId, a.id]);
  });

  it('answers 404 not_found when the user is not a member (or the id is malformed)', async () => {
    const ws = await newWorkspace();
    const u = await ws.user();
    const c = await createChannel(ws.owner);
    expectError(await ws.owner.delete(`/api/v1/channels/${c.id}/members/${u.id}`), 404, 'not_found');
    expectError(await ws.owner.delete(`/api/v1/channels/${c.id}/members/nope`), 404, 'not_found');
  });
});
