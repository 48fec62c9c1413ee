// Incoming hooks reply in threads at level 3 (contract §11): the native body
// takes `thread_id`, whose root must be a top-level message of the hook's
// channel. At level 2 the body is the documented one and refuses the field.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { Client } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, stack, type TestWorkspace } from '../support/stack.js';

async function hookIn(s: Stack, ws: TestWorkspace, name: string) {
  const channel = expectOk(await ws.owner.post('/api/v1/channels', { name }), 201).data;
  const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'CI' }), 201).data;
  return { channel, hook, sender: new Client(s.url) };
}

describe('incoming hooks: thread_id (level 3)', () => {
  it('posts a reply in the thread of a message the hook posted', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const { channel, hook, sender } = await hookIn(s, ws, `deploys-${randomUUID().slice(0, 8)}`);
    const root = expectOk(await sender.post(`/hooks/${hook.id}`, { content: 'deploy started' }), 201).data;
    const reply = expectOk(await sender.post(`/hooks/${hook.id}`, { content: 'deploy finished', thread_id: root.id }), 201).data;
    expect(reply.thread_id).to.equal(root.id);
    const thread = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages?thread_id=${root.id}`)).data;
    expect(thread.map((m: { id: string }) => m.id)).to.deep.equal([reply.id]);
    // Top-level history does not list the reply.
    const top = expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages`)).data;
    expect(top.map((m: { id: string }) => m.id)).to.deep.equal([root.id]);
  });

  it('refuses a root that is not a top-level message of the hook channel with 400 validation_error, and posts nothing', async () => {
    const s = await level3Stack();
    const ws = await newWorkspace(s);
    const a = await hookIn(s, ws, `a-${randomUUID().slice(0, 8)}`);
    const b = await hookIn(s, ws, `b-${randomUUID().slice(0, 8)}`);
    const root = expectOk(await a.sender.post(`/hooks/${a.hook.id}`, { content: 'root' }), 201).data;
    const reply = expectOk(await a.sender.post(`/hooks/${a.hook.id}`, { content: 'reply', thread_id: root.id }), 201).data;
    const count = async () => Number((await s.rt.db('messages').where({ channel_id: b.channel.id }).count({ n: '*' }))[0]!.n);
    const before = await count();
    // A message of another channel, a reply (not top-level), an unknown id, not an id at all.
    for (const threadId of [root.id, reply.id, randomUUID(), 'not-an-id']) {
      expectError(await b.sender.post(`/hooks/${b.hook.id}`, { content: 'x', thread_id: threadId }), 400, 'validation_error');
    }
    expectError(await a.sender.post(`/hooks/${a.hook.id}`, { content: 'x', thread_id: reply.id }), 400, 'validation_error');
    expect(await count()).to.equal(before);
  });

  it('keeps the level-2 body: thread_id is an unknown field there', async () => {
    const ws = await newWorkspace();
    const { hook, sender } = await hookIn(stack(), ws, `l2-${randomUUID().slice(0, 8)}`);
    const root = expectOk(await sender.post(`/hooks/${hook.id}`, { content: 'root' }), 201).data;
    expectError(await sender.post(`/hooks/${hook.id}`, { content: 'reply', thread_id: root.id }), 400, 'validation_error');
  });
});
