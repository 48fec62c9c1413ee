import { expect } from 'chai';
import type { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage } from '../support/conversations.js';
import { newWorkspace, stack } from '../support/stack.js';

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
