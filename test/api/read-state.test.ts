// Read state (contract §12, level 3): POST /channels/{id}/read and /dms/{id}/read,
// last_read_message_id / unread_count / mention_count on channel and DM objects
// for the caller, channel.read to the caller's own streams only. At level 2
// nothing of it exists and the objects are as before.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { openRaw } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, uniqueName } from '../support/stack.js';

const mentionOf = (user: { id: string }, text = 'hey') => ({
  content: `${text} @someone`,
  content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `${text} ` }, { type: 'mention', attrs: { id: user.id } }] }] },
});

describe('read state (level 3)', () => {
  it('counts unread and mentions after the mark, moves the mark forward only, and tells only the reader\'s streams', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const me = expectOk(await ws.owner.get('/api/v1/users/me')).data;
    const bob = await ws.user();
    const ch = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('rs') }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${ch.id}/members`, { user_id: bob.id }), 201);
    const post = async (body: Record<string, unknown>, client = bob.client) => expectOk(await client.post(`/api/v1/channels/${ch.id}/messages`, body), 201).data;

    const first = await post({ content: 'one' });
    await post({ content: 'mine' }, ws.owner); // our own: never unread
    await post(mentionOf(me));
    await post({ content: 'a reply', thread_id: first.id }); // replies: not counted
    const before = expectOk(await ws.owner.get(`/api/v1/channels/${ch.id}`)).data;
    expect(before).to.include({ last_read_message_id: null, unread_count: 2, mention_count: 1 });

    const mine = await openRaw(s.url, ws.ownerKey);
    const bobs = await openRaw(s.url, bob.key);
    try {
      expect((await ws.owner.post(`/api/v1/channels/${ch.id}/read`, { message_id: first.id })).status).to.equal(204);
      const event = await mine.waitFor((f) => f.event === 'channel.read');
      expect(event.data).to.deep.include({ channel_id: ch.id, last_read_message_id: first.id });
      const listed = expectOk(await ws.owner.get('/api/v1/channels')).data.find((c: { id: string }) => c.id === ch.id);
      expect(listed).to.include({ last_read_message_id: first.id, unread_count: 1, mention_count: 1 });

      // Never backwards: marking an older message changes nothing and says nothing.
      const latest = await post({ content: 'latest' });
      expect((await ws.owner.post(`/api/v1/channels/${ch.id}/read`, { message_id: latest.id })).status).to.equal(204);
      expect((await ws.owner.post(`/api/v1/channels/${ch.id}/read`, { message_id: first.id })).status).to.equal(204);
      expect(expectOk(await ws.owner.get(`/api/v1/channels/${ch.id}`)).data).to.include({ last_read_message_id: latest.id, unread_count: 0, mention_count: 0 });
      await mine.waitForCount((f) => f.event === 'channel.read', 2);
      // A marker event after everything: the second "read" of an older message sent nothing.
      await post({ content: 'marker' });
      await mine.waitFor((f) => f.event === 'message.created' && f.data.message.content === 'marker');
      expect(mine.events('channel.read')).to.have.length(2);
      await bobs.waitFor((f) => f.event === 'message.created' && f.data.message.content === 'marker');
      expect(bobs.events('channel.read')).to.have.length(0);
      // Bob's own state is his: he never read, and only the owner's one top-level message ('mine') is by someone else.
      expect(expectOk(await bob.client.get(`/api/v1/channels/${ch.id}`)).data).to.include({ last_read_message_id: null, unread_count: 1, mention_count: 0 });
    } finally {
      mine.close();
      bobs.close();
    }
  });

  it('works for DMs; refuses a message of another conversation, a hidden conversation and a non-member', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const me = expectOk(await ws.owner.get('/api/v1/users/me')).data;
    const bob = await ws.user();
    const carol = await ws.user();
    const dm = expectOk(await bob.client.post('/api/v1/dms', { user_ids: [me.id] }), 201).data;
    const m = expectOk(await bob.client.post(`/api/v1/dms/${dm.id}/messages`, { content: 'hello' }), 201).data;
    expect(expectOk(await ws.owner.get('/api/v1/dms')).data[0]).to.include({ id: dm.id, unread_count: 1, mention_count: 0 });
    expect((await ws.owner.post(`/api/v1/dms/${dm.id}/read`, { message_id: m.id })).status).to.equal(204);
    expect(expectOk(await ws.owner.get(`/api/v1/dms/${dm.id}`)).data).to.include({ last_read_message_id: m.id, unread_count: 0 });

    // Carol cannot see the DM: 404 as for any hidden conversation.
    expectError(await carol.client.post(`/api/v1/dms/${dm.id}/read`, { message_id: m.id }), 404, 'not_found');
    // A message of another channel: 404; not a uuid: 400.
    const pub = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('pub') }), 201).data;
    const other = expectOk(await ws.owner.post(`/api/v1/channels/${pub.id}/messages`, { content: 'elsewhere' }), 201).data;
    expectError(await ws.owner.post(`/api/v1/dms/${dm.id}/read`, { message_id: other.id }), 404, 'not_found');
    expectError(await ws.owner.post(`/api/v1/dms/${dm.id}/read`, { message_id: 'nope' }), 400, 'validation_error');
    // Carol is not in the public channel: no read state to keep (403), and the object shows none.
    expectError(await carol.client.post(`/api/v1/channels/${pub.id}/read`, { message_id: other.id }), 403, 'forbidden');
    expect(expectOk(await carol.client.get(`/api/v1/channels/${pub.id}`)).data).to.include({ last_read_message_id: null, unread_count: 0, mention_count: 0 });
  });

  it('does not exist at level 2: the routes answer 404 and the objects keep their fields', async () => {
    const ws = await newWorkspace(stack());
    const ch = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('l2') }), 201).data;
    const m = expectOk(await ws.owner.post(`/api/v1/channels/${ch.id}/messages`, { content: 'x' }), 201).data;
    expectError(await ws.owner.post(`/api/v1/channels/${ch.id}/read`, { message_id: m.id }), 404, 'not_found');
    const got = expectOk(await ws.owner.get(`/api/v1/channels/${ch.id}`)).data;
    expect(Object.keys(got)).to.deep.equal(['id', 'name', 'description', 'is_private', 'is_default', 'parent_channel_id', 'team_id', 'created_by', 'created_at']);
    const dms = expectOk(await ws.owner.get('/api/v1/dms')).data;
    for (const d of dms) expect(Object.keys(d)).to.deep.equal(['id', 'kind', 'member_ids', 'created_at']);
  });
});
