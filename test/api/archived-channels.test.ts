// Archived channels (level 3, contract §14): POST /channels/{id}/archive and
// /unarchive by owners, admins and the channel's creator; an archived channel
// stays readable and searchable, refuses every write with 403
// channel_archived, and is left out of GET /channels unless asked. Channels
// carry member_count and is_member.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { busEvents } from '../support/bus.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import { Client } from '../support/client.js';
import type { Stack } from '../../services/stack.js';

describe('archived channels (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
  });
  const newChannel = async (client: Client, body: Record<string, unknown> = {}) =>
    expectOk(await client.post('/api/v1/channels', { name: uniqueName('c'), ...body }), 201).data as { id: string; name: string };
  const listIds = async (client: Client, query = '') => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res = expectOk(await client.get(`/api/v1/channels?limit=200${query}${cursor ? `&cursor=${cursor}` : ''}`));
      ids.push(...res.data.map((c: { id: string }) => c.id));
      cursor = res.pagination.next_cursor;
    } while (cursor);
    return ids;
  };

  it('refuses every write with 403 channel_archived, changing nothing, and takes them again once unarchived', async () => {
    const member = await ws.user();
    const outsider = await ws.user();
    const channel = await newChannel(ws.owner);
    const base = `/api/v1/channels/${channel.id}`;
    expectOk(await ws.owner.post(`${base}/members`, { user_id: member.id }), 201);
    const m = expectOk(await ws.owner.post(`${base}/messages`, { content: 'before' }), 201).data;
    const buttons = {
      type: 'doc',
      content: [{ type: 'block_button_group', attrs: { blockName: 'button_group', version: 1, props: { buttons: [{ label: 'Go', actionId: 'go' }] } } }],
    };
    const card = expectOk(await ws.owner.post(`${base}/messages`, { content: 'Deploy?', content_json: buttons }), 201).data;
    const streaming = expectOk(await ws.owner.post(`${base}/messages`, { content: 'writing', streaming: true }), 201).data;
    expectOk(await ws.owner.post(`${base}/messages/${m.id}/reactions`, { emoji: 'eyes' }), 201);
    expectOk(await ws.owner.post(`${base}/pins`, { message_id: m.id }), 201);
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'CI' }), 201).data;
    // A hook is cached once it posts: archiving must reach the cache too.
    expectOk(await new Client(s.url).post(`/hooks/${hook.id}`, { content: 'from the hook' }), 201);
    const snapshot = async () => ({
      messages: await s.rt.db('messages').where({ channel_id: channel.id }).orderBy('seq').select('id', 'content', 'edited_at', 'pinned_at', 'streaming'),
      reactions: await s.rt.db('reactions').where({ message_id: m.id }).select('emoji', 'user_id'),
      members: await s.rt.db('channel_members').where({ channel_id: channel.id }).orderBy('user_id').pluck('user_id'),
      channel: await s.rt.db('channels').where({ id: channel.id }).first('name', 'description'),
      hooks: await s.rt.db('incoming_webhooks').where({ channel_id: channel.id }).count('* as n').first(),
      clicks: await s.rt.db('interactions').where({ channel_id: channel.id }).count('* as n').first(),
    });

    const archived = expectOk(await ws.owner.post(`${base}/archive`)).data;
    expect(archived.archived_at).to.be.a('string');
    const before = await snapshot();

    const writes: [string, () => ReturnType<Client['get']>][] = [
      ['post a message', () => ws.owner.post(`${base}/messages`, { content: 'after' })],
      ['post a reply', () => ws.owner.post(`${base}/messages`, { content: 'reply', thread_id: m.id })],
      ['edit a message', () => ws.owner.patch(`${base}/messages/${m.id}`, { content: 'edited' })],
      ['delete a message', () => ws.owner.delete(`${base}/messages/${m.id}`)],
      ['react', () => ws.owner.post(`${base}/messages/${m.id}/reactions`, { emoji: 'tada' })],
      ['remove a reaction', () => ws.owner.delete(`${base}/messages/${m.id}/reactions/eyes`)],
      ['pin', () => ws.owner.post(`${base}/pins`, { message_id: streaming.id })],
      ['unpin', () => ws.owner.delete(`${base}/pins/${m.id}`)],
      ['append to a streamed reply', () => ws.owner.post(`${base}/messages/${streaming.id}/append`, { content: ' more' })],
      ['finish a streamed reply', () => ws.owner.post(`${base}/messages/${streaming.id}/finish`, {})],
      ['add a member', () => ws.owner.post(`${base}/members`, { user_id: outsider.id })],
      ['remove a member', () => ws.owner.delete(`${base}/members/${member.id}`)],
      ['leave', () => member.client.delete(`${base}/members/${member.id}`)],
      ['rename', () => ws.owner.patch(base, { name: uniqueName('renamed') })],
      ['type', () => ws.owner.post(`${base}/typing`)],
      ['click a button', () => member.client.post('/api/v1/interactions/actions', { message_id: card.id, action_id: 'go' })],
      ['create a webhook', () => ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channel.id, name: 'another' })],
      ['post through a webhook', () => new Client(s.url).post(`/hooks/${hook.id}`, { content: 'hook after' })],
      ['post through a compatible webhook', () => new Client(s.url).post(`/hooks/compat/${hook.id}`, { text: 'compat after' })],
    ];
    for (const [what, write] of writes) {
      const res = await write();
      expect(res.status, `${what}: ${res.text}`).to.equal(403);
      expectError(res, 403, 'channel_archived');
    }
    expect(await snapshot()).to.deep.equal(before);

    // Readable as before: history, one message, pins, members, the channel itself.
    expect(expectOk(await ws.owner.get(`${base}/messages`)).data.map((x: { id: string }) => x.id)).to.include(m.id);
    expect(expectOk(await member.client.get(`${base}/messages/${m.id}`)).data.content).to.equal('before');
    expect(expectOk(await outsider.client.get(`${base}/pins`)).data).to.have.length(1);
    expect(expectOk(await outsider.client.get(`${base}/members`)).data).to.have.length(2);
    expect(expectOk(await outsider.client.get(base)).data.archived_at).to.equal(archived.archived_at);

    const unarchived = expectOk(await ws.owner.post(`${base}/unarchive`)).data;
    expect(unarchived.archived_at).to.equal(null);
    expectOk(await ws.owner.post(`${base}/messages`, { content: 'after' }), 201);
    expectOk(await new Client(s.url).post(`/hooks/${hook.id}`, { content: 'hook after' }), 201);
    expectOk(await ws.owner.post(`${base}/members`, { user_id: outsider.id }), 201);
  });

  it('stays searchable by whoever could read it (and hidden from whoever could not)', async () => {
    const reader = await ws.user();
    const word = `zebra${Date.now()}`;
    const open = await newChannel(ws.owner);
    const closed = await newChannel(ws.owner, { is_private: true });
    expectOk(await ws.owner.post(`/api/v1/channels/${open.id}/messages`, { content: `open ${word}` }), 201);
    expectOk(await ws.owner.post(`/api/v1/channels/${closed.id}/messages`, { content: `closed ${word}` }), 201);
    expectOk(await ws.owner.post(`/api/v1/channels/${open.id}/archive`));
    expectOk(await ws.owner.post(`/api/v1/channels/${closed.id}/archive`));
    const found = async (client: Client) => expectOk(await client.get(`/api/v1/search/messages?q=${word}`)).data.map((x: { content: string }) => x.content).sort();
    expect(await found(ws.owner)).to.deep.equal([`closed ${word}`, `open ${word}`]);
    expect(await found(reader.client)).to.deep.equal([`open ${word}`]);
    expectError(await reader.client.post(`/api/v1/channels/${closed.id}/archive`), 404, 'not_found');
  });

  it('is left out of GET /channels unless include_archived=true', async () => {
    const kept = await newChannel(ws.owner);
    const gone = await newChannel(ws.owner);
    expectOk(await ws.owner.post(`/api/v1/channels/${gone.id}/archive`));
    const listed = await listIds(ws.owner);
    expect(listed).to.include(kept.id).and.not.include(gone.id);
    const all = await listIds(ws.owner, '&include_archived=true');
    expect(all).to.include.members([kept.id, gone.id]);
    expect(await listIds(ws.owner, '&include_archived=false')).to.deep.equal(listed);
    expectError(await ws.owner.get('/api/v1/channels?include_archived=yes'), 400, 'validation_error');
  });

  it('lets owners, admins and the creator archive and unarchive (others 403), never a default channel (409), and audits each change once', async () => {
    const creator = await ws.user();
    const admin = await ws.user({ role: 'admin' });
    const other = await ws.user();
    const channel = await newChannel(creator.client);
    const base = `/api/v1/channels/${channel.id}`;
    expectOk(await other.client.post(`${base}/members`, { user_id: other.id }), 201);
    expectError(await other.client.post(`${base}/archive`), 403, 'forbidden');
    expect(await s.rt.db('channels').where({ id: channel.id }).first('archived_at')).to.deep.equal({ archived_at: null });
    expectOk(await creator.client.post(`${base}/archive`));
    // Archiving again changes nothing (and writes no second entry).
    expectOk(await admin.client.post(`${base}/archive`));
    expectError(await other.client.post(`${base}/unarchive`), 403, 'forbidden');
    expectOk(await admin.client.post(`${base}/unarchive`));
    expectOk(await ws.owner.post(`${base}/archive`));

    const audit = expectOk(await ws.owner.get('/api/v1/audit-log?limit=200')).data.filter((e: { target_id: string }) => e.target_id === channel.id);
    expect(audit.map((e: { action: string; actor_id: string }) => [e.action, e.actor_id]).reverse()).to.deep.equal([
      ['channel.archived', creator.id],
      ['channel.unarchived', admin.id],
      ['channel.archived', ws.ownerId],
    ]);

    const byDefault = await newChannel(ws.owner, { is_default: true });
    expectError(await ws.owner.post(`/api/v1/channels/${byDefault.id}/archive`), 409, 'conflict');
    expect(await s.rt.db('channels').where({ id: byDefault.id }).first('archived_at')).to.deep.equal({ archived_at: null });
  });

  it('announces archiving and unarchiving as channel.updated carrying archived_at', async () => {
    const channel = await newChannel(ws.owner);
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/archive`));
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/unarchive`));
    await s.relay?.drain();
    const updates = (await busEvents(s)).filter((e) => e.type === 'channel.updated' && e.data.channel.id === channel.id);
    expect(updates.map((e) => e.data.channel.archived_at === null)).to.deep.equal([false, true]);
  });

  it('gives each channel its member_count and, for the caller, is_member, in lists and single answers', async () => {
    const joiner = await ws.user();
    const a = await newChannel(ws.owner);
    const b = await newChannel(ws.owner);
    expectOk(await joiner.client.post(`/api/v1/channels/${a.id}/members`, { user_id: joiner.id }), 201);
    const listed = async (client: Client) => {
      const res = expectOk(await client.get('/api/v1/channels?limit=200')).data as { id: string; member_count: number; is_member: boolean }[];
      return Object.fromEntries(res.filter((c) => c.id === a.id || c.id === b.id).map((c) => [c.id, [c.member_count, c.is_member]]));
    };
    expect(await listed(ws.owner)).to.deep.equal({ [a.id]: [2, true], [b.id]: [1, true] });
    expect(await listed(joiner.client)).to.deep.equal({ [a.id]: [2, true], [b.id]: [1, false] });
    expect(expectOk(await joiner.client.get(`/api/v1/channels/${b.id}`)).data).to.include({ member_count: 1, is_member: false, archived_at: null });
    const created = expectOk(await joiner.client.post('/api/v1/channels', { name: uniqueName('c') }), 201).data;
    expect(created).to.include({ member_count: 1, is_member: true, archived_at: null });
  });
});

describe('level 2 knows nothing of pins, archiving or reactivation', () => {
  it('answers 404 on their routes and carries none of their fields', async () => {
    const ws = await newWorkspace();
    const bot = await ws.user({ is_agent: true });
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data;
    expect(channel).not.to.have.any.keys('archived_at', 'member_count', 'is_member');
    const listed = expectOk(await ws.owner.get('/api/v1/channels?limit=200')).data.find((c: { id: string }) => c.id === channel.id);
    expect(listed).not.to.have.any.keys('archived_at', 'member_count', 'is_member');
    const m = expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/messages`, { content: 'x' }), 201).data;
    expect(m).not.to.have.any.keys('pinned_at', 'pinned_by');
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${channel.id}/messages`)).data[0]).not.to.have.any.keys('pinned_at', 'pinned_by');
    for (const res of [
      await ws.owner.post(`/api/v1/channels/${channel.id}/pins`, { message_id: m.id }),
      await ws.owner.get(`/api/v1/channels/${channel.id}/pins`),
      await ws.owner.post(`/api/v1/channels/${channel.id}/archive`),
      await ws.owner.post(`/api/v1/workspaces/current/members/${bot.id}/reactivate`),
      await ws.owner.get(`/api/v1/users/${bot.id}/api-keys`),
    ]) {
      expectError(res, 404, 'not_found');
    }
    expect(await stack().rt.db('channels').where({ id: channel.id }).first('archived_at')).to.deep.equal({ archived_at: null });
  });
});
