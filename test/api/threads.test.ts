import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage, waitForEvents } from '../support/conversations.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Stack } from '../../services/stack.js';

const threadRow = (rootId: string) => stack().rt.db('threads').where({ root_message_id: rootId }).first();

describe('threads', () => {
  it('creates the thread record with the first reply and counts replies', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const root = await postMessage(ws.owner, c.id, 'root');
    expect(await threadRow(root.id)).to.equal(undefined);
    const r1 = await postMessage(ws.owner, c.id, { content: 'r1', thread_id: root.id });
    expect(r1.thread_id).to.equal(root.id);
    expect(await threadRow(root.id)).to.include({ reply_count: 1, channel_id: c.id });
    const r2 = await postMessage(ws.owner, c.id, { content: 'r2', thread_id: root.id });
    const got = expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${root.id}`)).data;
    expect(got.thread.reply_count).to.equal(2);
    expect(got.thread.last_reply_at).to.equal(r2.created_at);
    expect(r1.thread).to.equal(null);
  });

  it('counts concurrent first replies correctly', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const root = await postMessage(ws.owner, c.id, 'root');
    await Promise.all(Array.from({ length: 10 }, (_, i) => postMessage(ws.owner, c.id, { content: `r${i}`, thread_id: root.id })));
    expect((await threadRow(root.id)).reply_count).to.equal(10);
  });

  it('lists top-level messages without thread_id and only the replies (not the root) with it', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const root = await postMessage(ws.owner, c.id, 'root');
    const other = await postMessage(ws.owner, c.id, 'other');
    const r1 = await postMessage(ws.owner, c.id, { content: 'r1', thread_id: root.id });
    const r2 = await postMessage(ws.owner, c.id, { content: 'r2', thread_id: root.id });
    const top = expectOk(await ws.owner.get(messagesUrl(c.id))).data.map((m: { id: string }) => m.id);
    expect(top).to.deep.equal([other.id, root.id]);
    const replies = expectOk(await ws.owner.get(`${messagesUrl(c.id)}?thread_id=${root.id}`)).data.map((m: { id: string }) => m.id);
    expect(replies).to.deep.equal([r2.id, r1.id]);
    const listedRoot = expectOk(await ws.owner.get(messagesUrl(c.id))).data.find((m: { id: string }) => m.id === root.id);
    expect(listedRoot.thread).to.deep.equal({ reply_count: 2, last_reply_at: r2.created_at });
  });

  it('answers 400 validation_error when thread_id is not a top-level message of the same channel, posting nothing', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const other = await createChannel(ws.owner);
    const root = await postMessage(ws.owner, c.id, 'root');
    const reply = await postMessage(ws.owner, c.id, { content: 'r', thread_id: root.id });
    const elsewhere = await postMessage(ws.owner, other.id, 'x');
    for (const thread_id of [reply.id, elsewhere.id, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await ws.owner.post(messagesUrl(c.id), { content: 'x', thread_id });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/thread_id/);
      expectError(await ws.owner.get(`${messagesUrl(c.id)}?thread_id=${thread_id}`), 400, 'validation_error');
    }
    expect((await threadRow(root.id)).reply_count).to.equal(1);
    const count = await stack().rt.db('messages').where({ channel_id: c.id }).count<{ c: string }>('* as c').first();
    expect(Number(count?.c)).to.equal(2);
  });

  it('decrements the count when a reply is deleted and drops the thread info at zero', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const root = await postMessage(ws.owner, c.id, 'root');
    const r1 = await postMessage(ws.owner, c.id, { content: 'r1', thread_id: root.id });
    const r2 = await postMessage(ws.owner, c.id, { content: 'r2', thread_id: root.id });
    expectOk(await ws.owner.delete(`${messagesUrl(c.id)}/${r2.id}`), 204);
    let got = expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${root.id}`)).data;
    expect(got.thread).to.deep.equal({ reply_count: 1, last_reply_at: r1.created_at });
    const [e] = await waitForEvents((x) => x.type === 'message.deleted' && x.data.message_id === r2.id);
    expect(e!.data.thread_id).to.equal(root.id);
    expectOk(await ws.owner.delete(`${messagesUrl(c.id)}/${r1.id}`), 204);
    got = expectOk(await ws.owner.get(`${messagesUrl(c.id)}/${root.id}`)).data;
    expect(got.thread).to.equal(null);
  });

  it('deletes the replies with their root', async () => {
    const ws = await newWorkspace();
    const c = await createChannel(ws.owner);
    const root = await postMessage(ws.owner, c.id, 'root');
    const r1 = await postMessage(ws.owner, c.id, { content: 'r1', thread_id: root.id });
    expectOk(await ws.owner.delete(`${messagesUrl(c.id)}/${root.id}`), 204);
    expectError(await ws.owner.get(`${messagesUrl(c.id)}/${r1.id}`), 404, 'not_found');
    expect(await threadRow(root.id)).to.equal(undefined);
  });
});

// Followed threads (level 3, docs/team-chat.md "Followed threads"): GET
// /threads lists the threads one started, replied to or was mentioned in,
// newest reply first, with the replies by others not read yet;
// POST /threads/{root}/read moves the mark.
describe('GET /api/v1/threads (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
  });
  const mentionOf = (userId: string, text: string) => ({
    content: text,
    content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `${text} ` }, { type: 'mention', attrs: { id: userId } }] }] },
  });
  type Followed = { root: { id: string; content: string; thread: { reply_count: number } }; unread_replies: number; last_read_message_id: string | null };
  const followed = async (client: TestWorkspace['owner'], query = '') => expectOk(await client.get(`/api/v1/threads${query}`)) as { data: Followed[]; pagination: { next_cursor: string | null } };

  it('lists the threads one started, replied to or was mentioned in, newest reply first, with unread replies by others', async () => {
    const me = await ws.user();
    const c = await createChannel(ws.owner, { name: uniqueName('t') });
    expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: me.id }), 201);
    const started = await postMessage(me.client, c.id, 'mine');
    const repliedTo = await postMessage(ws.owner, c.id, 'theirs, I reply');
    const mentionedInReply = await postMessage(ws.owner, c.id, 'theirs, I am mentioned in a reply');
    const mentionedInRoot = await postMessage(ws.owner, c.id, mentionOf(me.id, 'root mentions'));
    const notMine = await postMessage(ws.owner, c.id, 'theirs alone');
    const noReplies = await postMessage(me.client, c.id, 'mine, no replies');

    await postMessage(ws.owner, c.id, { content: 'a', thread_id: repliedTo.id });
    await postMessage(me.client, c.id, { content: 'my reply', thread_id: repliedTo.id });
    await postMessage(ws.owner, c.id, { content: 'after mine', thread_id: repliedTo.id });
    await postMessage(ws.owner, c.id, { content: 'x', thread_id: notMine.id });
    await postMessage(ws.owner, c.id, { thread_id: mentionedInReply.id, ...mentionOf(me.id, 'look') });
    await postMessage(ws.owner, c.id, { content: 'r', thread_id: mentionedInRoot.id });
    await postMessage(ws.owner, c.id, { content: 'one', thread_id: started.id });
    await postMessage(ws.owner, c.id, { content: 'two', thread_id: started.id });

    const list = await followed(me.client);
    expect(list.data.map((t) => t.root.id)).to.deep.equal([started.id, mentionedInRoot.id, mentionedInReply.id, repliedTo.id]);
    expect(list.data.map((t) => t.unread_replies)).to.deep.equal([2, 1, 1, 1]);
    expect(list.data[0]!.root.thread.reply_count).to.equal(2);
    expect(list.data[0]!.last_read_message_id).to.equal(null);
    expect(list.data.map((t) => t.root.id)).to.not.include.members([notMine.id, noReplies.id]);
    // The owner follows every thread there but its own replies are never unread.
    const owners = await followed(ws.owner);
    expect(owners.data.find((t) => t.root.id === notMine.id)?.unread_replies).to.equal(0);
  });

  it('pages by the newest reply, and moves the read mark forward only', async () => {
    const c = await createChannel(ws.owner, { name: uniqueName('t') });
    const other = await ws.user();
    expectOk(await ws.owner.post(`/api/v1/channels/${c.id}/members`, { user_id: other.id }), 201);
    const roots: { id: string }[] = [];
    for (let i = 0; i < 3; i += 1) roots.push(await postMessage(ws.owner, c.id, `root ${i}`));
    const replies: { id: string }[] = [];
    for (const root of roots) replies.push(await postMessage(other.client, c.id, { content: 'reply', thread_id: root.id }));
    const later = await postMessage(other.client, c.id, { content: 'later', thread_id: roots[0]!.id });

    const first = await followed(ws.owner, '?limit=2');
    expect(first.data.map((t) => t.root.id)).to.deep.equal([roots[0]!.id, roots[2]!.id]);
    const second = await followed(ws.owner, `?limit=2&cursor=${first.pagination.next_cursor}`);
    expect(second.data.map((t) => t.root.id)).to.deep.equal([roots[1]!.id]);
    expect(second.pagination.next_cursor).to.equal(null);

    expect(await ws.owner.post(`/api/v1/threads/${roots[0]!.id}/read`, { message_id: later.id })).to.have.property('status', 204);
    // An older reply does not move it back.
    expect(await ws.owner.post(`/api/v1/threads/${roots[0]!.id}/read`, { message_id: replies[0]!.id })).to.have.property('status', 204);
    const after = (await followed(ws.owner)).data.find((t) => t.root.id === roots[0]!.id)!;
    expect(after).to.include({ unread_replies: 0, last_read_message_id: later.id, last_reply_id: later.id });
  });

  it('leaves out conversations one is not a member of, and refuses marks outside them', async () => {
    const outsider = await ws.user();
    const c = await createChannel(ws.owner, { name: uniqueName('t'), is_private: true });
    const root = await postMessage(ws.owner, c.id, mentionOf(outsider.id, 'not for you'));
    const reply = await postMessage(ws.owner, c.id, { content: 'r', thread_id: root.id });
    expect((await followed(outsider.client)).data).to.deep.equal([]);
    expectError(await outsider.client.post(`/api/v1/threads/${root.id}/read`, { message_id: reply.id }), 404, 'not_found');
    expectError(await ws.owner.post(`/api/v1/threads/${root.id}/read`, { message_id: root.id }), 404, 'not_found');
    expectError(await ws.owner.post(`/api/v1/threads/${reply.id}/read`, { message_id: reply.id }), 404, 'not_found');
    expectError(await ws.owner.post(`/api/v1/threads/${root.id}/read`, { message_id: 'nope' }), 400, 'validation_error');
  });

  it('does not exist at level 2', async () => {
    expectError(await (await newWorkspace()).owner.get('/api/v1/threads'), 404, 'not_found');
  });
});
