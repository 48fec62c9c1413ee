import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage, waitForEvents } from '../support/conversations.js';
import { newWorkspace, stack } from '../support/stack.js';

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
