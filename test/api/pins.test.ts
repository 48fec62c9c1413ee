// Pins (level 3, contract §14): any member pins a message of the conversation
// (top-level or a reply), at most 100 per conversation; readers list them
// newest pin first; messages carry pinned_at and pinned_by.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { expectError, expectOk } from '../support/expect.js';
import { busEvents } from '../support/bus.js';
import { level3Stack, newWorkspace, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Stack } from '../../services/stack.js';
import { pinsPageSql } from '../../services/core/pins/pins.store.js';
import { messageSqlAt } from '../../services/core/messages/messages.store.js';

describe('pins (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
  });
  const newChannel = async (isPrivate = false) => expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;
  const post = async (base: string, content: string, threadId?: string) =>
    expectOk(await ws.owner.post(`${base}/messages`, { content, ...(threadId ? { thread_id: threadId } : {}) }), 201).data;
  const pinsOf = async (base: string) => expectOk(await ws.owner.get(`${base}/pins`)).data as { id: string; pinned_at: string; pinned_by: string }[];
  const events = async (type: string, messageId: string) => {
    await s.relay?.drain();
    return (await busEvents(s)).filter((e) => e.type === type && e.data.message_id === messageId);
  };

  for (const kind of ['channel', 'dm'] as const) {
    it(`pins a top-level message and a reply of a ${kind}, lists them newest pin first, unpins (with events and the message's pinned_at/pinned_by)`, async () => {
      const member = await ws.user();
      const base =
        kind === 'channel'
          ? `/api/v1/channels/${await newChannel()}`
          : `/api/v1/dms/${expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [member.id] }), 201).data.id}`;
      if (kind === 'channel') expectOk(await ws.owner.post(`${base}/members`, { user_id: member.id }), 201);
      const root = await post(base, 'root');
      const reply = await post(base, 'reply', root.id);
      const other = await post(base, 'other');
      expect(root).to.include({ pinned_at: null, pinned_by: null });

      const pinned = expectOk(await member.client.post(`${base}/pins`, { message_id: root.id }), 201).data;
      expect(pinned.id).to.equal(root.id);
      expect(pinned.pinned_by).to.equal(member.id);
      expect(Date.parse(pinned.pinned_at)).to.be.closeTo(Date.now(), 60_000);
      expectOk(await ws.owner.post(`${base}/pins`, { message_id: reply.id }), 201);
      // Pinning again changes nothing: 200 with the message as it is.
      const again = expectOk(await ws.owner.post(`${base}/pins`, { message_id: root.id }), 200).data;
      expect(again).to.include({ pinned_at: pinned.pinned_at, pinned_by: member.id });

      expect((await pinsOf(base)).map((m) => m.id)).to.deep.equal([reply.id, root.id]);
      // The message says it is pinned wherever it is read: one message, the history page.
      expect(expectOk(await ws.owner.get(`${base}/messages/${root.id}`)).data).to.include({ pinned_at: pinned.pinned_at, pinned_by: member.id });
      const page = expectOk(await ws.owner.get(`${base}/messages`)).data as { id: string; pinned_at: string | null }[];
      expect(page.find((m) => m.id === root.id)!.pinned_at).to.equal(pinned.pinned_at);
      expect(page.find((m) => m.id === other.id)!.pinned_at).to.equal(null);

      expect(await events('message.pinned', root.id)).to.have.length(1);
      const [event] = await events('message.pinned', root.id);
      expect(event.data).to.include({ message_id: root.id, user_id: member.id });
      expect(event.data.message.pinned_by).to.equal(member.id);

      expectOk(await member.client.delete(`${base}/pins/${root.id}`), 204);
      expect((await pinsOf(base)).map((m) => m.id)).to.deep.equal([reply.id]);
      expect(expectOk(await ws.owner.get(`${base}/messages/${root.id}`)).data).to.include({ pinned_at: null, pinned_by: null });
      expect(await events('message.unpinned', root.id)).to.have.length(1);
      // Not pinned (any more), or no such message: 404.
      expectError(await member.client.delete(`${base}/pins/${root.id}`), 404, 'not_found');
      expectError(await member.client.delete(`${base}/pins/not-a-uuid`), 404, 'not_found');
    });
  }

  it('pages through pins newest first without repeats', async () => {
    const base = `/api/v1/channels/${await newChannel()}`;
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const m = await post(base, `m${i}`);
      ids.push(m.id);
    }
    // Pinned in another order than posted: the list follows the pins.
    const order = [3, 0, 6, 1, 5, 2, 4].map((i) => ids[i]!);
    for (const id of order) expectOk(await ws.owner.post(`${base}/pins`, { message_id: id }), 201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = expectOk(await ws.owner.get(`${base}/pins?limit=3${cursor ? `&cursor=${cursor}` : ''}`));
      seen.push(...res.data.map((m: { id: string }) => m.id));
      cursor = res.pagination.next_cursor;
    } while (cursor);
    expect(seen).to.deep.equal([...order].reverse());
  });

  it('refuses a message of another conversation, an unknown one and a bad id; non-members: 403 (public) or 404 (private, DM)', async () => {
    const outsider = await ws.user();
    const publicId = await newChannel();
    const elsewhere = await post(`/api/v1/channels/${await newChannel()}`, 'elsewhere');
    const base = `/api/v1/channels/${publicId}`;
    const m = await post(base, 'here');
    expectError(await ws.owner.post(`${base}/pins`, { message_id: elsewhere.id }), 404, 'not_found');
    expectError(await ws.owner.post(`${base}/pins`, { message_id: randomUUID() }), 404, 'not_found');
    expectError(await ws.owner.post(`${base}/pins`, { message_id: 'nope' }), 400, 'validation_error');
    expectError(await ws.owner.post(`${base}/pins`, {}), 400, 'validation_error');
    // A public channel's reader may list its pins, not change them.
    expectOk(await ws.owner.post(`${base}/pins`, { message_id: m.id }), 201);
    expect(expectOk(await outsider.client.get(`${base}/pins`)).data.map((x: { id: string }) => x.id)).to.deep.equal([m.id]);
    expectError(await outsider.client.post(`${base}/pins`, { message_id: m.id }), 403, 'forbidden');
    expectError(await outsider.client.delete(`${base}/pins/${m.id}`), 403, 'forbidden');

    const privateBase = `/api/v1/channels/${await newChannel(true)}`;
    const secret = await post(privateBase, 'secret');
    expectOk(await ws.owner.post(`${privateBase}/pins`, { message_id: secret.id }), 201);
    expectError(await outsider.client.get(`${privateBase}/pins`), 404, 'not_found');
    expectError(await outsider.client.post(`${privateBase}/pins`, { message_id: secret.id }), 404, 'not_found');
    expectError(await outsider.client.delete(`${privateBase}/pins/${secret.id}`), 404, 'not_found');

    const other = await ws.user();
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data;
    expectError(await outsider.client.get(`/api/v1/dms/${dm.id}/pins`), 404, 'not_found');
    // The other kind's path hides it too.
    expectError(await ws.owner.get(`/api/v1/channels/${dm.id}/pins`), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/dms/${publicId}/pins`), 404, 'not_found');
    // Nothing of the refusals was written.
    expect(await s.rt.db('messages').where({ id: elsewhere.id }).first('pinned_at')).to.deep.equal({ pinned_at: null });
  });

  const pinCount = async (channelId: string) =>
    Number((await s.rt.db('messages').where({ channel_id: channelId }).whereNotNull('pinned_at').count<{ n: string }>('* as n').first())!.n);
  const postMany = async (channelId: string, n: number) => {
    const ids = (
      await s.rt.db('messages')
        .insert(Array.from({ length: n }, (_, i) => ({ id: randomUUID(), workspace_id: ws.workspaceId, channel_id: channelId, author_id: ws.ownerId, content: `m${i}` })))
        .returning('id')
    ).map((r: { id: string }) => r.id);
    return ids;
  };

  it('holds at most 100 pins per conversation: the 101st is 409 conflict until one is unpinned', async () => {
    const channelId = await newChannel();
    const base = `/api/v1/channels/${channelId}`;
    const ids = await postMany(channelId, 101);
    // 99 pinned directly, the 100th through the API.
    await s.rt.db('messages').whereIn('id', ids.slice(0, 99)).update({ pinned_at: s.rt.db.fn.now(), pinned_by: ws.ownerId });
    expectOk(await ws.owner.post(`${base}/pins`, { message_id: ids[99] }), 201);
    expectError(await ws.owner.post(`${base}/pins`, { message_id: ids[100] }), 409, 'conflict');
    expect(await pinCount(channelId)).to.equal(100);
    // Pinning one already pinned is no new pin: still answered.
    expectOk(await ws.owner.post(`${base}/pins`, { message_id: ids[0] }), 200);
    expectOk(await ws.owner.delete(`${base}/pins/${ids[0]}`), 204);
    expectOk(await ws.owner.post(`${base}/pins`, { message_id: ids[100] }), 201);
    expect(await pinCount(channelId)).to.equal(100);
    // Every pin listed, on pages of at most 200.
    expect(expectOk(await ws.owner.get(`${base}/pins?limit=200`)).data).to.have.length(100);
  });

  it('holds the bound under concurrent pins: of 20 at once with 90 pinned, exactly 10 succeed', async () => {
    const channelId = await newChannel();
    const base = `/api/v1/channels/${channelId}`;
    const ids = await postMany(channelId, 110);
    await s.rt.db('messages').whereIn('id', ids.slice(0, 90)).update({ pinned_at: s.rt.db.fn.now(), pinned_by: ws.ownerId });
    const answers = await Promise.all(ids.slice(90).map((id) => ws.owner.post(`${base}/pins`, { message_id: id })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((st) => st === 201)).to.have.length(10);
    expect(statuses.filter((st) => st === 409)).to.have.length(10);
    for (const r of answers.filter((x) => x.status === 409)) expectError(r, 409, 'conflict');
    expect(await pinCount(channelId)).to.equal(100);
  });

  it('reads a conversation\'s pins and counts them on messages_channel_pins, not its other messages', async () => {
    const channelId = await newChannel();
    await s.rt.db.raw(
      `INSERT INTO messages (workspace_id, channel_id, author_id, content) SELECT ?, ?, ?, 'message ' || g FROM generate_series(1, 3000) g`,
      [ws.workspaceId, channelId, ws.ownerId],
    );
    await s.rt.db.raw(`UPDATE messages SET pinned_at = now() - make_interval(secs => seq), pinned_by = ? WHERE id IN (SELECT id FROM messages WHERE channel_id = ? LIMIT 20)`, [ws.ownerId, channelId]);
    await s.rt.db.raw('ANALYZE messages');
    const plan = async (sql: string, bindings: unknown[]) =>
      ((await s.rt.db.raw(`EXPLAIN ${sql}`, bindings as never)).rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
    for (const cursor of [null, 1e15]) {
      const page = await plan(pinsPageSql(messageSqlAt(3).json), [channelId, cursor, cursor, 51]);
      expect(page).to.include('messages_channel_pins').and.not.match(/Seq Scan on messages/);
    }
    const count = await plan(s.rt.db('messages').where({ channel_id: channelId }).whereNotNull('pinned_at').count('* as n').toString(), []);
    expect(count).to.include('messages_channel_pins');
  });
});
