// History pages select rows and render them in Node (messagePresenter and
// messageListWriter, messages.store.ts listMessages); before, Postgres
// rendered each page as JSON (the Message's SQL rendering, MessageSql.json,
// which search, pins and the relay still use). Over a corpus of every kind of
// message, at level 2 and level 3, in a channel, a thread and a DM, each page
// the API answers holds the bytes the SQL rendering gives of the same rows;
// deleted messages are on no page, and the writer reads its own writes.
import { expect } from 'chai';
import type { Stack } from '../../services/stack.js';
import { postMessage as post } from '../../services/core/messages/messages.service.js';
import { messageSqlAt, setUnfurls } from '../../services/core/messages/messages.store.js';
import { expectOk } from '../support/expect.js';
import { uploadFile } from '../support/files.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

/** The page as Postgres rendered it (the statement history pages ran before), with its cursor facts. */
async function sqlPage(s: Stack, where: string, list: string, before: string, limit: number) {
  const json = messageSqlAt(s.rt.config.featureLevel).json;
  const { rows } = await s.rt.db.raw(
    `SELECT coalesce('[' || string_agg(p.message::text, ',' ORDER BY p.seq DESC) FILTER (WHERE p.n <= ?) || ']', '[]') AS data,
            min(p.seq) FILTER (WHERE p.n <= ?) AS last_seq, count(*) > ? AS has_more
       FROM (SELECT m.seq, row_number() OVER (ORDER BY m.seq DESC) AS n, ${json} AS message
               FROM messages m WHERE ${where} AND m.seq < ?::bigint ORDER BY m.seq DESC LIMIT ?::int + 1) p`,
    [limit, limit, limit, list, before, limit],
  );
  return rows[0] as { data: string; last_seq: number | null; has_more: boolean };
}

const pageData = (text: string) => text.slice('{"data":'.length, text.lastIndexOf(',"pagination":'));

/** Walks a list page by page through the API and holds each page to the SQL rendering of the same rows. */
async function comparePages(s: Stack, ws: TestWorkspace, url: string, where: string, list: string, limit: number) {
  let cursor: string | null = null;
  let before = '9223372036854775807';
  let pages = 0;
  let messages = 0;
  do {
    const res = await fetch(`${s.url}${url}${url.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { authorization: `Bearer ${ws.ownerKey}` },
    });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    const expected = await sqlPage(s, where, list, before, limit);
    expect(pageData(text), `${url} page ${pages + 1}`).to.equal(expected.data);
    const page = JSON.parse(text) as { data: unknown[]; pagination: { next_cursor: string | null; has_more: boolean } };
    expect(page.pagination.has_more).to.equal(expected.has_more);
    messages += page.data.length;
    cursor = page.pagination.next_cursor;
    if (expected.last_seq !== null) before = String(expected.last_seq);
    pages++;
  } while (cursor);
  return { pages, messages };
}

async function corpus(s: Stack, ws: TestWorkspace, level: 2 | 3) {
  const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('render') }), 201).data.id as string;
  const base = `/api/v1/channels/${channelId}/messages`;
  const postOk = async (body: Record<string, unknown>, client = ws.owner, at = base) => expectOk(await client.post(at, body), 201).data as { id: string };
  const u = await ws.user();
  const bot = await ws.user({ is_agent: true });
  for (const member of [u, bot]) expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: member.id }), 201);

  await postOk({ content: 'plain' });
  await postOk({ content: 'unicode: é ü 漢字 😀 \u2028 \u2029 "quoted" back\\slash tab\there <b>html</b> & amp' });
  await postOk({ content: 'x'.repeat(3000) });
  const rich = await postOk({
    content: `rich, mentions <@${u.id}>`,
    content_json: {
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: 'hi ', marks: [{ type: 'bold' }] }, { type: 'mention', attrs: { id: u.id } }] },
        { type: 'block_repo_pr_card', attrs: { blockName: 'repo_pr_card', version: 1, props: { url: 'https://github.com/acme/app/pull/1', title: 'Fix', state: 'open' } } },
      ],
    },
    // Keys out of order, numbers jsonb would rewrite, unicode and a null.
    metadata: { type: 'ci.run', data: { z: 1, a: { y: 1e21, b: 5e-7, n: 1.5, neg: -0.25 }, s: 'é \u2028 😀 "q"', list: [3, 1, 2], nil: null } },
  });
  for (const emoji of ['tada', 'eyes']) expectOk(await ws.owner.post(`${base}/${rich.id}/reactions`, { emoji }), 201);
  expectOk(await u.client.post(`${base}/${rich.id}/reactions`, { emoji: 'tada' }), 201);
  const replies = [];
  for (let i = 0; i < 7; i++) replies.push(await postOk({ content: `reply ${i}`, thread_id: rich.id, ...(i === 2 ? { metadata: { type: 't', data: { b: 2, a: 1 } } } : {}) }, i % 2 ? u.client : ws.owner));
  expectOk(await ws.owner.post(`${base}/${replies[1]!.id}/reactions`, { emoji: '+1' }), 201);
  // A deleted reply: the thread counts one fewer, and no page shows it.
  expectOk(await u.client.delete(`${base}/${replies[3]!.id}`), 204);
  const edited = await postOk({ content: 'before' });
  expectOk(await ws.owner.patch(`${base}/${edited.id}`, { content: 'after', metadata: { type: 'e', data: { x: 0.1 } } }));
  const gone = await postOk({ content: 'deleted soon' });
  expectOk(await ws.owner.delete(`${base}/${gone.id}`), 204);
  // A root whose only reply was deleted: no thread object.
  const lonely = await postOk({ content: 'lonely root' });
  const only = await postOk({ content: 'only reply', thread_id: lonely.id });
  expectOk(await ws.owner.delete(`${base}/${only.id}`), 204);
  await post(s.rt, {
    workspaceId: ws.workspaceId,
    channelId,
    authorId: null,
    content: 'from a hook',
    display: { username: 'CI', icon_url: 'https://example.com/i.png' },
    webhookId: '3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b',
  });
  // A file carried by a message.
  const file = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('notes\n'), name: 'notes.txt', type: 'text/plain' });
  expect(file.status, file.text).to.equal(201);
  const fileId = (file.body as unknown as { data: { id: string } }).data.id;
  await postOk({ content: 'Shared a file: notes.txt', metadata: { type: 'axid.file', data: { file_id: fileId, name: 'notes.txt', size: 6, content_type: 'text/plain' } } });
  // Timestamps with microseconds (edited_at by now(), a created_at written by SQL): pages truncate them to milliseconds as a Date does.
  await s.rt.db.raw(`INSERT INTO messages (workspace_id, channel_id, author_id, content, created_at) VALUES (?, ?, ?, 'micro', '2026-01-02 03:04:05.678999+00')`, [
    ws.workspaceId,
    channelId,
    ws.ownerId,
  ]);
  if (level === 3) {
    const streamed = await postOk({ content: 'Thinking', streaming: true }, bot.client);
    expectOk(await bot.client.post(`${base}/${streamed.id}/append`, { content: ' more' }));
    const finished = await postOk({ content: 'Done', streaming: true }, bot.client);
    expectOk(await bot.client.post(`${base}/${finished.id}/append`, { content: ' now' }));
    expectOk(await bot.client.post(`${base}/${finished.id}/finish`, { content_json: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Done now' }] }] } }));
    await postOk({ content: '@here and @channel look' });
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/pins`, { message_id: rich.id }), 201);
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/pins`, { message_id: replies[0]!.id }), 201);
    const linked = await postOk({ content: 'see https://example.com/page' });
    await setUnfurls(s.rt.db, linked.id, 'see https://example.com/page', JSON.stringify([{ url: 'https://example.com/page', title: 'A "page"', description: null, site_name: 'Ex', image_url: null }]));
  }
  for (let i = 0; i < 25; i++) await postOk({ content: `filler ${i}` }, i % 3 ? ws.owner : u.client);
  return { channelId, base, rootId: rich.id, deleted: [gone.id, replies[3]!.id, only.id] };
}

for (const level of [2, 3] as const) {
  describe(`history pages rendered in Node, byte for byte as Postgres rendered them (level ${level})`, function () {
    this.timeout(60_000);
    let s: Stack;
    let ws: TestWorkspace;
    before(async () => {
      s = level === 3 ? await level3Stack() : stack();
      ws = await newWorkspace(s);
    });

    it('gives every page of a channel, a thread and a DM the SQL rendering of the same rows, and no deleted message', async () => {
      const c = await corpus(s, ws, level);
      const channelWhere = 'm.channel_id = ?::uuid AND m.thread_id IS NULL';
      for (const limit of [1, 7, 50]) {
        const top = await comparePages(s, ws, c.base, channelWhere, c.channelId, limit);
        expect(top.messages).to.be.greaterThan(30);
        const thread = await comparePages(s, ws, `${c.base}?thread_id=${c.rootId}`, 'm.thread_id = ?::uuid', c.rootId, limit);
        expect(thread.messages).to.equal(6);
      }
      const all = [
        ...(expectOk(await ws.owner.get(`${c.base}?limit=200`)).data as { id: string }[]),
        ...(expectOk(await ws.owner.get(`${c.base}?limit=200&thread_id=${c.rootId}`)).data as { id: string }[]),
      ].map((m) => m.id);
      for (const id of c.deleted) expect(all).not.to.include(id);

      // A DM (the same path under /dms).
      const other = await ws.user();
      const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data.id as string;
      for (let i = 0; i < 9; i++) expectOk(await (i % 2 ? other.client : ws.owner).post(`/api/v1/dms/${dm}/messages`, { content: `dm ${i} ✓` }), 201);
      await comparePages(s, ws, `/api/v1/dms/${dm}/messages`, channelWhere, dm, 4);
    });

    it('shows the writer its own post, edit and delete on the next page read', async () => {
      const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('own') }), 201).data.id as string;
      const base = `/api/v1/channels/${channelId}/messages`;
      const newest = async () => (expectOk(await ws.owner.get(`${base}?limit=5`)).data as { id: string; content: string }[]).map((m) => `${m.id} ${m.content}`);
      const first = expectOk(await ws.owner.post(base, { content: 'one' }), 201).data.id as string;
      expect(await newest()).to.deep.equal([`${first} one`]);
      const second = expectOk(await ws.owner.post(base, { content: 'two' }), 201).data.id as string;
      expect(await newest()).to.deep.equal([`${second} two`, `${first} one`]);
      expectOk(await ws.owner.patch(`${base}/${first}`, { content: 'one, edited' }));
      expect(await newest()).to.deep.equal([`${second} two`, `${first} one, edited`]);
      expectOk(await ws.owner.delete(`${base}/${second}`), 204);
      expect(await newest()).to.deep.equal([`${first} one, edited`]);
    });
  });
}
