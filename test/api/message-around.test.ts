// History pages that go both ways (level 3, docs/decisions.md "Messages"):
// `around=<message id>` opens a page holding a message anywhere in history,
// `after=<prev_cursor>` walks newer from it, `cursor` older as before.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Stack } from '../../services/stack.js';
import { apiRoutes } from '../../services/api/routes.js';
import { buildOpenApi } from '../../services/api/openapi.js';

type Page = { data: { id: string; content: string }[]; pagination: { next_cursor: string | null; has_more: boolean; prev_cursor?: string | null } };

describe('GET .../messages around a message, and after a cursor (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  before(async () => {
    s = await level3Stack();
  });
  beforeEach(async () => {
    ws = await newWorkspace(s);
  });

  const channel = async (client = ws.owner, isPrivate = false) =>
    expectOk(await client.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;
  /** `count` messages m1..m<count> (oldest first) written in bulk; their ids, oldest first. */
  async function seed(channelId: string, count: number, threadId: string | null = null, prefix = 'm'): Promise<string[]> {
    const { rows } = await s.rt.db.raw(
      `INSERT INTO messages (workspace_id, channel_id, author_id, thread_id, content)
       SELECT ?, ?, ?, ?, ? || g FROM generate_series(1, ?::int) g RETURNING id, seq`,
      [ws.workspaceId, channelId, ws.ownerId, threadId, prefix, count],
    );
    if (threadId) {
      await s.rt.db.raw(
        `INSERT INTO threads (root_message_id, workspace_id, channel_id, reply_count, last_reply_at) VALUES (?, ?, ?, ?, now())
         ON CONFLICT (root_message_id) DO UPDATE SET reply_count = threads.reply_count + EXCLUDED.reply_count`,
        [threadId, ws.workspaceId, channelId, count],
      );
      await s.rt.db('messages').where({ id: threadId }).update({ has_replies: true });
    }
    return (rows as { id: string; seq: string }[]).sort((a, b) => Number(a.seq) - Number(b.seq)).map((r) => r.id);
  }
  const get = async (url: string, client = ws.owner): Promise<Page> => expectOk(await client.get(url));
  const contents = (page: Page) => page.data.map((m) => m.content);
  const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => `m${from - i}`);

  it('gives a page holding the message, half the limit older and the rest newer, newest first', async () => {
    const c = await channel();
    const ids = await seed(c, 41);
    const page = await get(`/api/v1/channels/${c}/messages?around=${ids[20]}&limit=10`);
    expect(contents(page)).to.deep.equal(range(25, 16));
    expect(page.pagination.has_more).to.equal(true);
    expect(page.pagination.next_cursor).to.be.a('string');
    expect(page.pagination.prev_cursor).to.be.a('string');
    // Older continues from the oldest returned, newer from the newest returned.
    expect(contents(await get(`/api/v1/channels/${c}/messages?cursor=${page.pagination.next_cursor}&limit=10`))).to.deep.equal(range(15, 6));
    const newer = await get(`/api/v1/channels/${c}/messages?after=${page.pagination.prev_cursor}&limit=10`);
    expect(contents(newer)).to.deep.equal(range(35, 26));
    // A page from `after` says there are older ones too, from its oldest.
    expect(newer.pagination.has_more).to.equal(true);
    expect(contents(await get(`/api/v1/channels/${c}/messages?cursor=${newer.pagination.next_cursor}&limit=3`))).to.deep.equal(range(25, 23));
    const newest = await get(`/api/v1/channels/${c}/messages?after=${newer.pagination.prev_cursor}&limit=10`);
    expect(contents(newest)).to.deep.equal(range(41, 36));
    expect(newest.pagination.prev_cursor).to.equal(null);
  });

  it('fills the page from the other side near the newest and near the oldest message', async () => {
    const c = await channel();
    const ids = await seed(c, 41);
    const nearNewest = await get(`/api/v1/channels/${c}/messages?around=${ids[39]}&limit=10`);
    expect(contents(nearNewest)).to.deep.equal(range(41, 32));
    expect(nearNewest.pagination.prev_cursor).to.equal(null);
    expect(nearNewest.pagination.has_more).to.equal(true);
    const newestItself = await get(`/api/v1/channels/${c}/messages?around=${ids[40]}&limit=10`);
    expect(contents(newestItself)).to.deep.equal(range(41, 32));
    const nearOldest = await get(`/api/v1/channels/${c}/messages?around=${ids[1]}&limit=10`);
    expect(contents(nearOldest)).to.deep.equal(range(10, 1));
    expect(nearOldest.pagination).to.include({ next_cursor: null, has_more: false });
    expect(nearOldest.pagination.prev_cursor).to.be.a('string');
    const all = await get(`/api/v1/channels/${c}/messages?around=${ids[5]}&limit=200`);
    expect(contents(all)).to.deep.equal(range(41, 1));
    expect(all.pagination).to.deep.equal({ next_cursor: null, has_more: false, prev_cursor: null });
    const one = await get(`/api/v1/channels/${c}/messages?around=${ids[5]}&limit=1`);
    expect(contents(one)).to.deep.equal(['m6']);
  });

  it('walks older and newer from a message to both ends, each message once', async () => {
    const c = await channel();
    const ids = await seed(c, 57);
    const first = await get(`/api/v1/channels/${c}/messages?around=${ids[30]}&limit=7`);
    const seen = contents(first);
    for (let cursor = first.pagination.next_cursor; cursor; ) {
      const page = await get(`/api/v1/channels/${c}/messages?cursor=${cursor}&limit=7`);
      seen.push(...contents(page));
      cursor = page.pagination.next_cursor;
      expect(page.pagination.has_more).to.equal(cursor !== null);
    }
    for (let after = first.pagination.prev_cursor; after; ) {
      const page = await get(`/api/v1/channels/${c}/messages?after=${after}&limit=7`);
      expect(page.data.length).to.be.within(1, 7);
      seen.unshift(...contents(page));
      after = page.pagination.prev_cursor ?? null;
    }
    expect(seen).to.deep.equal(range(57, 1));
  });

  it('gives the newest page prev_cursor null, and an older page the cursor of the page newer than it', async () => {
    const c = await channel();
    await seed(c, 12);
    const newest = await get(`/api/v1/channels/${c}/messages?limit=5`);
    expect(newest.pagination.prev_cursor).to.equal(null);
    const older = await get(`/api/v1/channels/${c}/messages?limit=5&cursor=${newest.pagination.next_cursor}`);
    expect(contents(older)).to.deep.equal(range(7, 3));
    expect(contents(await get(`/api/v1/channels/${c}/messages?limit=5&after=${older.pagination.prev_cursor}`))).to.deep.equal(range(12, 8));
    const empty = await get(`/api/v1/channels/${(await channel())}/messages`);
    expect(empty.pagination).to.deep.equal({ next_cursor: null, has_more: false, prev_cursor: null });
  });

  it('opens a thread reply among its thread\'s replies (thread_id), not among top-level messages', async () => {
    const c = await channel();
    const [root] = await seed(c, 3);
    const replies = await seed(c, 20, root!, 'r');
    const page = await get(`/api/v1/channels/${c}/messages?thread_id=${root}&around=${replies[9]}&limit=5`);
    expect(contents(page)).to.deep.equal(['r12', 'r11', 'r10', 'r9', 'r8']);
    const seen = contents(page);
    for (let after = page.pagination.prev_cursor; after; ) {
      const p = await get(`/api/v1/channels/${c}/messages?thread_id=${root}&after=${after}&limit=5`);
      seen.unshift(...contents(p));
      after = p.pagination.prev_cursor ?? null;
    }
    for (let cursor = page.pagination.next_cursor; cursor; ) {
      const p = await get(`/api/v1/channels/${c}/messages?thread_id=${root}&cursor=${cursor}&limit=5`);
      seen.push(...contents(p));
      cursor = p.pagination.next_cursor;
    }
    expect(seen).to.deep.equal(Array.from({ length: 20 }, (_, i) => `r${20 - i}`));
    // A reply is no top-level message, nor a root one of its thread's replies.
    expectError(await ws.owner.get(`/api/v1/channels/${c}/messages?around=${replies[9]}`), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/channels/${c}/messages?thread_id=${root}&around=${root}`), 404, 'not_found');
  });

  it('opens a message of a DM the same way', async () => {
    const other = await ws.user();
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data.id as string;
    const ids = await seed(dm, 15);
    const page = await get(`/api/v1/dms/${dm}/messages?around=${ids[7]}&limit=4`, other.client);
    expect(contents(page)).to.deep.equal(['m9', 'm8', 'm7', 'm6']);
    expect(contents(await get(`/api/v1/dms/${dm}/messages?after=${page.pagination.prev_cursor}&limit=4`, other.client))).to.deep.equal(range(13, 10));
    // A DM's message is not found under /channels, as GET of the message.
    expectError(await ws.owner.get(`/api/v1/channels/${dm}/messages?around=${ids[7]}`), 404, 'not_found');
  });

  it('answers 404 for a message the list does not hold: another channel\'s, a hidden one, none', async () => {
    const c = await channel();
    await seed(c, 5);
    const outsider = await ws.user();
    const hidden = await channel(ws.owner, true);
    const [secret] = await seed(hidden, 1);
    const res = await outsider.client.get(`/api/v1/channels/${c}/messages?around=${secret}`);
    expectError(res, 404, 'not_found');
    // The same answer as GET of that message through the channel the caller can read.
    expect(res.body).to.deep.equal((await outsider.client.get(`/api/v1/channels/${c}/messages/${secret}`)).body);
    expectError(await outsider.client.get(`/api/v1/channels/${hidden}/messages?around=${secret}`), 404, 'not_found');
    expectError(await ws.owner.get(`/api/v1/channels/${c}/messages?around=00000000-0000-4000-8000-000000000000`), 404, 'not_found');
  });

  it('refuses around with cursor or after, after with cursor, and malformed values (400 validation_error)', async () => {
    const c = await channel();
    const ids = await seed(c, 10);
    const page = await get(`/api/v1/channels/${c}/messages?around=${ids[5]}&limit=3`);
    const { next_cursor: older, prev_cursor: newer } = page.pagination;
    for (const query of [`around=${ids[5]}&cursor=${older}`, `around=${ids[5]}&after=${newer}`, `after=${newer}&cursor=${older}`, 'around=nope', 'after=nope', 'after=']) {
      const res = await ws.owner.get(`/api/v1/channels/${c}/messages?${query}`);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message, query).to.match(/^(around|after)/);
    }
  });

  it('is not at level 2: around and after are unknown query fields there, ignored as any other, and no prev_cursor', async () => {
    const ws2 = await newWorkspace(stack());
    const c = expectOk(await ws2.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id as string;
    const ids: string[] = [];
    for (let i = 1; i <= 6; i++) ids.push(expectOk(await ws2.owner.post(`/api/v1/channels/${c}/messages`, { content: `m${i}` }), 201).data.id);
    const newest = expectOk(await ws2.owner.get(`/api/v1/channels/${c}/messages?limit=2`));
    for (const query of [`around=${ids[1]}`, `after=${newest.pagination.next_cursor}`, 'around=nope', 'some_field=1']) {
      const page = expectOk(await ws2.owner.get(`/api/v1/channels/${c}/messages?limit=2&${query}`));
      expect(page, query).to.deep.equal(newest);
    }
    expect(newest.pagination).to.deep.equal({ next_cursor: newest.pagination.next_cursor, has_more: true });
  });

  it('is in the level-3 OpenAPI document (around, after, prev_cursor) and not in the level-2 one', () => {
    type Doc = { paths: Record<string, { get: { parameters?: { name: string }[] } }>; components: { schemas: { Pagination: { properties: object; required?: string[] } } } };
    const doc = (level: 2 | 3) => buildOpenApi(apiRoutes(level).tables) as unknown as Doc;
    for (const [level, has] of [[2, false], [3, true]] as const) {
      const d = doc(level);
      for (const path of ['/api/v1/channels/{channel_id}/messages', '/api/v1/dms/{conversation_id}/messages']) {
        const names = (d.paths[path]!.get.parameters ?? []).map((p) => p.name);
        expect(names.includes('around'), `${path} at ${level}`).to.equal(has);
        expect(names.includes('after'), `${path} at ${level}`).to.equal(has);
      }
      expect(Object.keys(d.components.schemas.Pagination.properties).includes('prev_cursor')).to.equal(has);
      // Optional: only history lists give it.
      expect(d.components.schemas.Pagination.required ?? []).not.to.include('prev_cursor');
    }
  });
});
