import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage, streamEvents, waitForEvents } from '../support/conversations.js';
import { newWorkspace, stack } from '../support/stack.js';

const reactionsUrl = (c: string, m: string) => `${messagesUrl(c)}/${m}/reactions`;
const countReactions = async (messageId: string) =>
  Number((await stack().rt.db('reactions').where({ message_id: messageId }).count<{ c: string }>('* as c').first())?.c);

async function setup() {
  const ws = await newWorkspace();
  const c = await createChannel(ws.owner);
  const m = await postMessage(ws.owner, c.id, 'react to me');
  return { ws, c, m };
}

describe('POST /channels/:id/messages/:message_id/reactions', () => {
  it('adds a named reaction (201) and shows it on the message as {emoji, count, user_ids}', async () => {
    const { ws, c, m } = await setup();
    const u = await ws.user();
    expectOk(await u.client.post(`/api/v1/channels/${c.id}/members`, { user_id: u.id }), 201);
    const r = expectOk(await ws.owner.post(reactionsUrl(c.id, m.id), { emoji: 'thumbsup' }), 201).data;
    expect(r).to.include({ message_id: m.id, emoji: 'thumbsup', user_id: ws.ownerId });
    expectOk(await u.client.post(reactionsUrl(c.id, m.id), { emoji: 'thumbsup' }), 201);
    expectOk(await u.client.post(reactionsUrl(c.id, m.id), { emoji: '+1' }), 201);
    const got = expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${m.id}`)).data;
    expect(got.reactions).to.deep.equal([
      { emoji: 'thumbsup', count: 2, user_ids: [ws.ownerId, u.id] },
      { emoji: '+1', count: 1, user_ids: [u.id] },
    ]);
    await waitForEvents((e) => e.type === 'reaction.added' && e.data.message_id === m.id, 3);
  });

  it('accepts Unicode emoji, with skin tones, joiners and flags', async () => {
    const { ws, c, m } = await setup();
    for (const emoji of ['👍', '👍🏽', '❤️', '👩‍💻', '🇫🇷', '1️⃣']) {
      expectOk(await ws.owner.post(reactionsUrl(c.id, m.id), { emoji }), 201);
    }
    expect(await countReactions(m.id)).to.equal(6);
  });

  it('rejects anything else with 400 validation_error naming emoji', async () => {
    const { ws, c, m } = await setup();
    for (const emoji of ['', 'Thumbs Up', 'a'.repeat(65), '<script>', 'hello👍', 'é', 5, null]) {
      const res = await ws.owner.post(reactionsUrl(c.id, m.id), { emoji });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/emoji/);
    }
    expectError(await ws.owner.post(reactionsUrl(c.id, m.id), {}), 400, 'validation_error');
    expect(await countReactions(m.id)).to.equal(0);
  });

  it('changes nothing when the same user adds the same reaction again: the same reaction, the one status 201, no second event', async () => {
    const { ws, c, m } = await setup();
    const first = expectOk(await ws.owner.post(reactionsUrl(c.id, m.id), { emoji: 'tada' }), 201).data;
    const again = expectOk(await ws.owner.post(reactionsUrl(c.id, m.id), { emoji: 'tada' }), 201).data;
    expect(again).to.deep.equal(first);
    expect(await countReactions(m.id)).to.equal(1);
    // Events arrive in commit order: once the removal is on the stream, a second "added" would be too.
    expectOk(await ws.owner.delete(`${reactionsUrl(c.id, m.id)}/tada`), 204);
    await waitForEvents((e) => e.type === 'reaction.removed' && e.data.message_id === m.id);
    const added = (await streamEvents()).filter((e) => e.type === 'reaction.added' && e.data.message_id === m.id);
    expect(added).to.have.length(1);
    expect(added[0]!.data).to.deep.equal({ message_id: m.id, channel_id: c.id, emoji: 'tada', user_id: ws.ownerId });
  });

  it('answers 403 forbidden to a non-member of a public channel and 404 for a message elsewhere', async () => {
    const { ws, c, m } = await setup();
    const u = await ws.user();
    expectError(await u.client.post(reactionsUrl(c.id, m.id), { emoji: 'x' }), 403, 'forbidden');
    const other = await createChannel(ws.owner);
    expectError(await ws.owner.post(reactionsUrl(other.id, m.id), { emoji: 'x' }), 404, 'not_found');
    expect(await countReactions(m.id)).to.equal(0);
  });
});

describe('DELETE /channels/:id/messages/:message_id/reactions/:emoji', () => {
  it('removes the caller\'s reaction (204), URL-encoded Unicode included, and emits reaction.removed', async () => {
    const { ws, c, m } = await setup();
    expectOk(await ws.owner.post(reactionsUrl(c.id, m.id), { emoji: '👍🏽' }), 201);
    expectOk(await ws.owner.post(reactionsUrl(c.id, m.id), { emoji: '+1' }), 201);
    expectOk(await ws.owner.delete(`${reactionsUrl(c.id, m.id)}/${encodeURIComponent('👍🏽')}`), 204);
    expectOk(await ws.owner.delete(`${reactionsUrl(c.id, m.id)}/${encodeURIComponent('+1')}`), 204);
    expect(await countReactions(m.id)).to.equal(0);
    const [e] = await waitForEvents((x) => x.type === 'reaction.removed' && x.data.emoji === '👍🏽');
    expect(e!.data).to.deep.equal({ message_id: m.id, channel_id: c.id, emoji: '👍🏽', user_id: ws.ownerId });
  });

  it('answers 404 not_found when the caller has no such reaction (someone else\'s stays)', async () => {
    const { ws, c, m } = await setup();
    const u = await ws.user();
    expectOk(await u.client.post(`/api/v1/channels/${c.id}/members`, { user_id: u.id }), 201);
    expectOk(await u.client.post(reactionsUrl(c.id, m.id), { emoji: 'eyes' }), 201);
    expectError(await ws.owner.delete(`${reactionsUrl(c.id, m.id)}/eyes`), 404, 'not_found');
    expectError(await ws.owner.delete(`${reactionsUrl(c.id, m.id)}/rocket`), 404, 'not_found');
    expect(await countReactions(m.id)).to.equal(1);
  });
});
