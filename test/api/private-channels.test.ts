import { expect } from 'chai';
import type { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage } from '../support/conversations.js';
import { busEvents } from '../support/bus.js';
import { waitFor } from '../support/files.js';
import { driverQueries } from '../support/queries.js';
import { newWorkspace, stack, uniqueName } from '../support/stack.js';

/** Every endpoint under /channels/{id}, with a plausible valid body. */
async function everyEndpoint(client: Client, channelId: string, messageId: string, memberId: string, targetId: string) {
  const base = `/api/v1/channels/${channelId}`;
  return {
    'GET channel': await client.get(base),
    'PATCH channel': await client.patch(base, { name: 'taken over' }),
    'GET messages': await client.get(`${base}/messages`),
    'GET thread replies': await client.get(`${base}/messages?thread_id=${messageId}`),
    'POST message': await client.post(`${base}/messages`, { content: 'x' }),
    'POST reply': await client.post(`${base}/messages`, { content: 'x', thread_id: messageId }),
    'GET message': await client.get(`${base}/messages/${messageId}`),
    'PATCH message': await client.patch(`${base}/messages/${messageId}`, { content: 'x' }),
    'DELETE message': await client.delete(`${base}/messages/${messageId}`),
    'POST reaction': await client.post(`${base}/messages/${messageId}/reactions`, { emoji: 'thumbsup' }),
    'DELETE reaction': await client.delete(`${base}/messages/${messageId}/reactions/thumbsup`),
    'GET members': await client.get(`${base}/members`),
    'POST member': await client.post(`${base}/members`, { user_id: targetId }),
    'DELETE member': await client.delete(`${base}/members/${memberId}`),
    'POST typing': await client.post(`${base}/typing`),
  };
}

describe('a private channel seen from outside', () => {
  it('answers every endpoint with the identical 404 body, for an admin outsider and an agent, and changes nothing', async () => {
    const ws = await newWorkspace();
    const insider = await ws.user();
    const c = await createChannel(ws.owner, { is_private: true });
    expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: insider.id }), 201);
    const m = await postMessage(ws.owner, c.id, 'secret');
    expectOk(await ws.owner.post(`${messagesUrl(c.id)}/${m.id}/reactions`, { emoji: 'thumbsup' }), 201);
    const before = await stack().rt.db('messages').where({ channel_id: c.id }).select('id', 'content', 'edited_at');

    const missing = await ws.owner.get('/api/v1/channels/00000000-0000-4000-8000-000000000000');
    expectError(missing, 404, 'not_found');
    for (const outsider of [await ws.user({ role: 'admin' }), await ws.user({ is_agent: true })]) {
      const results = await everyEndpoint(outsider.client, c.id, m.id, insider.id, outsider.id);
      for (const [name, res] of Object.entries(results)) {
        expectError(res, 404, 'not_found');
        expect(res.body, name).to.deep.equal(missing.body);
      }
    }
    // The same calls on a channel that does not exist answer the same.
    const ghost = await everyEndpoint(ws.owner, '00000000-0000-4000-8000-000000000000', m.id, insider.id, insider.id);
    for (const [name, res] of Object.entries(ghost)) expect(res.body, name).to.deep.equal(missing.body);

    expect(await stack().rt.db('messages').where({ channel_id: c.id }).select('id', 'content', 'edited_at')).to.deep.equal(before);
    const members = await stack().rt.db('channel_members').where({ channel_id: c.id }).pluck('user_id');
    expect(members.sort()).to.deep.equal([ws.ownerId, insider.id].sort());
    expect(expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${m.id}`)).data.reactions).to.have.length(1);
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${c.id}`)).data.name).to.equal(c.name);
  });

  it('is fully usable by its members', async () => {
    const ws = await newWorkspace();
    const insider = await ws.user();
    const c = await createChannel(ws.owner, { is_private: true });
    expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: insider.id }), 201);
    const m = await postMessage(insider.client, c.id, 'hi');
    expectOk(await insider.client.get(messagesUrl(c.id)));
    expectOk(await insider.client.post(`${messagesUrl(c.id)}/${m.id}/reactions`, { emoji: 'wave' }), 201);
    expectOk(await insider.client.post(`/api/v1/channels/${c.id}/typing`), 204);
  });

  it('disappears for a member who leaves', async () => {
    const ws = await newWorkspace();
    const u = await ws.user();
    const c = await createChannel(ws.owner, { is_private: true });
    expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: u.id }), 201);
    expectOk(await u.client.get(`/api/v1/channels/${c.id}`));
    expectOk(await u.client.delete(`/api/v1/channels/${c.id}/members/${u.id}`), 204);
    expectError(await u.client.get(`/api/v1/channels/${c.id}`), 404, 'not_found');
    expect(expectOk(await u.client.get('/api/v1/channels')).data.map((x: { id: string }) => x.id)).not.to.include(c.id);
  });
});

describe('what is private stays unseen', () => {
  const hooksOf = async (client: Client) => (expectOk(await client.get('/api/v1/webhooks/incoming?limit=100')).data as { id: string }[]).map((h) => h.id);

  it('lists hooks of a private channel only to its members: their creator, and owners/admins who are members', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    const outsideAdmin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    const secret = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('secret'), is_private: true }), 201).data;
    for (const u of [admin, member]) expectOk(await ws.owner.post(`/api/v1/channels/${secret.id}/members`, { user_id: u.id }), 201);
    const open = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('open') }), 201).data;
    const memberHook = expectOk(await member.client.post('/api/v1/webhooks/incoming', { channel_id: secret.id, name: 'm' }), 201).data.id;
    const ownerHook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: secret.id, name: 'o' }), 201).data.id;
    const openHook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: open.id, name: 'p' }), 201).data.id;

    expect(await hooksOf(outsideAdmin.client), 'an admin outside the private channel').to.deep.equal([openHook]);
    expect(await hooksOf(admin.client), 'an admin in it').to.have.members([memberHook, ownerHook, openHook]);
    expect(await hooksOf(member.client), 'its creator, a member').to.deep.equal([memberHook]);
    // Out of the channel, its creator no longer sees it either.
    expectOk(await ws.owner.delete(`/api/v1/channels/${secret.id}/members/${member.id}`), 204);
    expect(await hooksOf(member.client)).to.deep.equal([]);
  });

  it('lets anyone create or rename a channel to the name of a private channel they cannot see, and says name_taken only for one they can', async () => {
    const ws = await newWorkspace();
    const outsider = await ws.user();
    const another = await ws.user();
    const hiddenName = uniqueName('hidden');
    expectOk(await ws.owner.post('/api/v1/channels', { name: hiddenName, is_private: true }), 201);
    // As for any free name: a private channel created, a public one renamed to it.
    const mine = expectOk(await outsider.client.post('/api/v1/channels', { name: hiddenName, is_private: true }), 201).data;
    expect(mine.name).to.equal(hiddenName);
    const open = expectOk(await another.client.post('/api/v1/channels', { name: uniqueName('open') }), 201).data;
    expect(expectOk(await another.client.patch(`/api/v1/channels/${open.id}`, { name: hiddenName })).data.name).to.equal(hiddenName);
    // Names the caller sees are taken: their own private channel, the public one.
    const other = expectOk(await outsider.client.post('/api/v1/channels', { name: uniqueName('other'), is_private: true }), 201).data;
    expectError(await outsider.client.post('/api/v1/channels', { name: hiddenName, is_private: true }), 409, 'name_taken');
    expectError(await outsider.client.patch(`/api/v1/channels/${other.id}`, { name: hiddenName }), 409, 'name_taken');
    expectError(await ws.owner.post('/api/v1/channels', { name: hiddenName }), 409, 'name_taken');
  });

  it('answers a hidden channel through the same path as one that does not exist (the same queries, every time)', async () => {
    const ws = await newWorkspace();
    const outsider = await ws.user();
    const secret = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('s'), is_private: true }), 201).data;
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const id of [secret.id, missing]) expectError(await outsider.client.get(`/api/v1/channels/${id}`), 404, 'not_found'); // warm
    // The queries given the channel's id: the shared stack's background work (jobs, pollers) runs meanwhile.
    const hidden = await driverQueries(() => outsider.client.get(`/api/v1/channels/${secret.id}/messages`), { carrying: secret.id });
    const absent = await driverQueries(() => outsider.client.get(`/api/v1/channels/${missing}/messages`), { carrying: missing });
    expect(hidden.length).to.equal(1);
    expect(hidden.map((q) => q.replace(/\$\d+/g, '$'))).to.deep.equal(absent.map((q) => q.replace(/\$\d+/g, '$')));
  });

  it('does not show a non-member the private parent of a public sub-channel', async () => {
    const ws = await newWorkspace();
    const outsider = await ws.user();
    const parent = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('parent'), is_private: true }), 201).data;
    const sub = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('sub'), parent_channel_id: parent.id }), 201).data;
    expect(sub.parent_channel_id, 'the creator, a member of the parent').to.equal(parent.id);
    const listed = (expectOk(await outsider.client.get('/api/v1/channels?limit=100')).data as { id: string; parent_channel_id: string | null }[]).find((c) => c.id === sub.id)!;
    expect(listed.parent_channel_id).to.equal(null);
    expect(expectOk(await outsider.client.get(`/api/v1/channels/${sub.id}`)).data.parent_channel_id).to.equal(null);
    // A member of the sub-channel, not of the parent, who updates it.
    expectOk(await ws.owner.post(`/api/v1/channels/${sub.id}/members`, { user_id: outsider.id }), 201);
    expect(expectOk(await outsider.client.patch(`/api/v1/channels/${sub.id}`, { description: 'x' })).data.parent_channel_id).to.equal(null);
    expect(JSON.stringify(expectOk(await outsider.client.get('/api/v1/channels?limit=100')))).to.not.include(parent.id);
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${sub.id}`)).data.parent_channel_id).to.equal(parent.id);
    // Its events go to the whole workspace: they leave a private parent out.
    const s = stack();
    const events = await waitFor(async () => {
      const now = (await busEvents(s)).filter((e) => e.data?.channel?.id === sub.id);
      return now.length >= 2 ? now : undefined;
    }, 'the channel events');
    for (const e of events) expect(e.data.channel.parent_channel_id).to.equal(null);
  });
});
