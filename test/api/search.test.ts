// Search (level 3, contract §9): GET /search/messages finds what the caller
// can read now, in web-search syntax, newest first, in keyset pages.
import { expect } from 'chai';
import pg from 'pg';
import { expectError, expectOk } from '../support/expect.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import { indexUnsearched } from '../../services/core/search/search.store.js';
import type { Stack } from '../../services/stack.js';
import { uploadFile } from '../support/files.js';

describe('GET /api/v1/search/messages (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
  });
  const channel = async (isPrivate = false) =>
    expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;
  const post = async (client: TestWorkspace['owner'], channelId: string, content: string, base = 'channels') =>
    expectOk(await client.post(`/api/v1/${base}/${channelId}/messages`, { content }), 201).data;
  const search = async (client: TestWorkspace['owner'], query: string) =>
    expectOk(await client.get(`/api/v1/search/messages?${query}`));
  const contents = (res: { data: { content: string }[] }) => res.data.map((m) => m.content);

  it('finds words (stemmed), phrases and identifiers, leaves out excluded words, newest first, as history pages render messages', async () => {
    const c = await channel();
    await post(ws.owner, c, 'the deploy of billing failed');
    await post(ws.owner, c, 'deploying billing again');
    await post(ws.owner, c, 'billing deploy worked');
    await post(ws.owner, c, 'call getUserById from user_service.ts');
    await post(ws.owner, c, 'to be or not to be');
    expect(contents(await search(ws.owner, 'q=deploys'))).to.deep.equal(['billing deploy worked', 'deploying billing again', 'the deploy of billing failed']);
    expect(contents(await search(ws.owner, `q=${encodeURIComponent('"deploy of billing"')}`))).to.deep.equal(['the deploy of billing failed']);
    expect(contents(await search(ws.owner, `q=${encodeURIComponent('deploy -failed')}`))).to.deep.equal(['billing deploy worked', 'deploying billing again']);
    expect(contents(await search(ws.owner, 'q=getUserById'))).to.deep.equal(['call getUserById from user_service.ts']);
    expect(contents(await search(ws.owner, 'q=user_service.ts'))).to.deep.equal(['call getUserById from user_service.ts']);
    // Stop words alone: found through the simple dictionary.
    expect(contents(await search(ws.owner, `q=${encodeURIComponent('"to be or not"')}`))).to.deep.equal(['to be or not to be']);
    const found = await search(ws.owner, 'q=worked');
    const single = expectOk(await ws.owner.get(`/api/v1/channels/${c}/messages/${found.data[0].id}`)).data;
    expect(found.data[0]).to.deep.equal(single);
    expect(found.pagination).to.deep.equal({ next_cursor: null, has_more: false });
  });

  it('never shows private channel or DM content to outsiders, nor to a member once they left; public channels to anyone', async () => {
    const outsider = await ws.user();
    const member = await ws.user();
    const word = `zebra${Date.now()}`;
    const priv = await channel(true);
    expectOk(await ws.owner.post(`/api/v1/channels/${priv}/members`, { user_id: member.id }), 201);
    await post(ws.owner, priv, `private ${word}`);
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [member.id] }), 201).data.id;
    await post(ws.owner, dm, `dm ${word}`, 'dms');
    const pub = await channel();
    await post(ws.owner, pub, `public ${word}`);
    const other = await newWorkspace(s);
    const elsewhere = expectOk(await other.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    await post(other.owner, elsewhere, `other workspace ${word}`);

    expect(contents(await search(outsider.client, `q=${word}`))).to.deep.equal([`public ${word}`]);
    expect(contents(await search(member.client, `q=${word}`))).to.deep.equal([`public ${word}`, `dm ${word}`, `private ${word}`]);
    expect(contents(await search(outsider.client, `q=${word}&channel_id=${priv}`))).to.deep.equal([]);
    expectOk(await member.client.delete(`/api/v1/channels/${priv}/members/${member.id}`), 204);
    expect(contents(await search(member.client, `q=${word}`))).to.deep.equal([`public ${word}`, `dm ${word}`]);
  });

  it('filters by channel_id and author_id, and pages newest first without repeats', async () => {
    const a = await channel();
    const b = await channel();
    const bot = await ws.user({ is_agent: true });
    expectOk(await ws.owner.post(`/api/v1/channels/${a}/members`, { user_id: bot.id }), 201);
    for (let i = 0; i < 7; i++) await post(ws.owner, a, `status report ${i}`);
    await post(ws.owner, b, 'status report in b');
    await post(bot.client, a, 'status report by bot');
    expect(contents(await search(ws.owner, `q=status&channel_id=${b}`))).to.deep.equal(['status report in b']);
    expect(contents(await search(ws.owner, `q=status&author_id=${bot.id}`))).to.deep.equal(['status report by bot']);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await search(ws.owner, `q=report&channel_id=${a}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.data.length).to.be.at.most(3);
      seen.push(...contents(page));
      cursor = page.pagination.next_cursor;
      // Posted meanwhile: newer than the walk, never in it.
      await post(ws.owner, a, 'report posted during the walk');
    } while (cursor);
    expect(seen).to.deep.equal(['status report by bot', ...[6, 5, 4, 3, 2, 1, 0].map((i) => `status report ${i}`)]);
  });

  it('answers 400 validation_error for an empty or missing q and bad filters', async () => {
    for (const query of ['', 'q=', `q=${encodeURIComponent('   ')}`, 'q=x&channel_id=nope', 'q=x&limit=0', 'q=x&cursor=bad']) {
      expectError(await ws.owner.get(`/api/v1/search/messages?${query}`), 400, 'validation_error');
    }
  });

  it('plans a rare word through the GIN index and a common word as a newest-first walk bounded by the page', async () => {
    const c = await channel();
    // Written apart from the stack's pool, whose statements are time-bounded,
    // with their words as a level-3 post writes them. Without a transaction
    // id: a posted row is its own event, and 100,000 of them would keep this
    // stack's relay busy long after the test.
    const bulk = new pg.Client({ connectionString: s.rt.config.databaseUrl });
    await bulk.connect();
    try {
      await bulk.query(
        `WITH m AS (
           INSERT INTO messages (workspace_id, channel_id, author_id, content)
           SELECT $1, $2, $3, 'common words here w' || (g % 3000) || CASE WHEN g % 50000 = 0 THEN ' rareword' ELSE '' END
             FROM generate_series(1, 100000) g
           RETURNING id, workspace_id, channel_id, seq, content)
         INSERT INTO message_search (message_id, workspace_id, channel_id, seq, words)
         SELECT id, workspace_id, channel_id, seq, axid_search_vector(content) FROM m`,
        [ws.workspaceId, c, ws.ownerId],
      );
      await bulk.query('ANALYZE message_search');
    } finally {
      await bulk.end();
    }
    const plan = async (q: string) => {
      const { rows } = await s.rt.db.raw(
        `EXPLAIN SELECT s.seq FROM message_search s WHERE s.words @@ (websearch_to_tsquery('english', ?) || websearch_to_tsquery('simple', ?))
           AND s.workspace_id = ? ORDER BY s.seq DESC LIMIT 51`,
        [q, q, ws.workspaceId],
      );
      return (rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
    };
    const rare = await plan('rareword');
    expect(rare, rare).to.include('message_search_words');
    // A long most-common-words list (migrations 025, 090): with the default
    // one, a rare word on the ten-million-message set was estimated at 100,000
    // rows and walked the whole workspace (docs/bench.md, scenario 8: search).
    const { rows: stats } = await s.rt.db.raw(`SELECT attstattarget FROM pg_attribute WHERE attrelid = 'message_search'::regclass AND attname = 'words'`);
    expect(Number((stats as { attstattarget: number }[])[0]!.attstattarget)).to.be.at.least(2000);
    const common = await plan('common');
    expect(common, common).to.include('message_search_workspace_seq');
    expect(common).not.to.include('Sort');
    expect(contents(await search(ws.owner, 'q=rareword'))).to.have.length(2);
  });

  it('finds an edited message by its new words only, and a streamed reply by what was appended once it is finished', async () => {
    const c = await channel();
    const m = await post(ws.owner, c, 'first draft about walruses');
    expectOk(await ws.owner.patch(`/api/v1/channels/${c}/messages/${m.id}`, { content: 'final text about penguins' }));
    expect(contents(await search(ws.owner, 'q=walruses'))).to.deep.equal([]);
    expect(contents(await search(ws.owner, 'q=penguins'))).to.deep.equal(['final text about penguins']);
    const reply = expectOk(await ws.owner.post(`/api/v1/channels/${c}/messages`, { content: 'thinking', streaming: true }), 201).data;
    expectOk(await ws.owner.post(`/api/v1/channels/${c}/messages/${reply.id}/append`, { content: ' about narwhals' }));
    // While it streams, by what it was posted with (appends do not re-index it: docs/feature-levels.md).
    expect(contents(await search(ws.owner, 'q=narwhals'))).to.deep.equal([]);
    expect(contents(await search(ws.owner, 'q=thinking'))).to.deep.equal(['thinking about narwhals']);
    expectOk(await ws.owner.post(`/api/v1/channels/${c}/messages/${reply.id}/finish`, {}));
    expect(contents(await search(ws.owner, 'q=narwhals'))).to.deep.equal(['thinking about narwhals']);
  });

  it('filters by time (before, after: exclusive) and by carrying a file (has=file), with or without words, and refuses other values', async () => {
    const c = await channel();
    const early = await post(ws.owner, c, 'report early');
    await s.rt.db('messages').where({ id: early.id }).update({ created_at: '2026-01-01T10:00:00Z' });
    const middle = await post(ws.owner, c, 'report middle');
    await s.rt.db('messages').where({ id: middle.id }).update({ created_at: '2026-02-01T10:00:00Z' });
    await post(ws.owner, c, 'report late');
    const upload = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('x\n'), name: 'report.txt', type: 'text/plain' });
    const file = expectOk({ ...upload, expectedLevel: '3' }, 201).data as { id: string };
    expectOk(
      await ws.owner.post(`/api/v1/channels/${c}/messages`, {
        content: 'report attached',
        metadata: { type: 'axid.file', data: { file_id: file.id, name: 'report.txt', size: 2, content_type: 'text/plain' } },
      }),
      201,
    );
    const q = (extra: string) => search(ws.owner, `q=report&${extra}`);
    expect(contents(await q(`before=${encodeURIComponent('2026-02-01T10:00:00Z')}`))).to.deep.equal(['report early']);
    expect(contents(await q(`after=${encodeURIComponent('2026-01-01T10:00:00Z')}&before=${encodeURIComponent('2026-03-01T00:00:00Z')}`))).to.deep.equal(['report middle']);
    expect(contents(await q('has=file'))).to.deep.equal(['report attached']);
    // Filters alone, without words: every message they keep, newest first.
    expect(contents(await search(ws.owner, 'has=file'))).to.deep.equal(['report attached']);
    expect(contents(await search(ws.owner, `q=&before=${encodeURIComponent('2026-02-01T10:00:00Z')}&channel_id=${c}`))).to.deep.equal(['report early']);
    expectError(await ws.owner.get('/api/v1/search/messages?q=report&has=link'), 400, 'validation_error');
    expectError(await ws.owner.get('/api/v1/search/messages?q=report&before=yesterday'), 400, 'validation_error');
  });

  it('indexes in the backfill what level 2 posted, including a transaction that commits after the backfill looked', async () => {
    const c = await channel();
    // A level-2 post: the row with its transaction id, no words.
    const asLevel2 = (db: pg.Client | typeof s.rt.db, content: string) => {
      const sql = `INSERT INTO messages (workspace_id, channel_id, author_id, content, event_xid) VALUES ($1, $2, $3, $4, pg_current_xact_id())`;
      const values = [ws.workspaceId, c, ws.ownerId, content];
      return db instanceof pg.Client ? db.query(sql, values) : db.raw(sql.replace(/\$\d/g, '?'), values);
    };
    await asLevel2(s.rt.db, 'posted at level two about otters');
    await asLevel2(s.rt.db, 'posted at level two about more otters');
    const slow = new pg.Client({ connectionString: s.rt.config.databaseUrl });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      await asLevel2(slow, 'a slow level two post about otters');
      expect(contents(await search(ws.owner, 'q=otters'))).to.deep.equal([]);
      expect(await indexUnsearched(s.rt.db, { batch: 1 })).to.equal(2);
      expect(contents(await search(ws.owner, 'q=otters'))).to.deep.equal(['posted at level two about more otters', 'posted at level two about otters']);
      await slow.query('COMMIT');
    } finally {
      await slow.end();
    }
    // The watermark stayed below the slow transaction, so the next run finds it.
    expect(await indexUnsearched(s.rt.db, { batch: 1000 })).to.equal(1);
    expect(contents(await search(ws.owner, 'q=otters'))).to.have.length(3);
    expect(await indexUnsearched(s.rt.db, { batch: 1000 })).to.equal(0);
  });
});

describe('search words at level 2', () => {
  it('are not written: a level-2 post costs no search index', async () => {
    const ws = await newWorkspace(stack());
    const c = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id as string;
    const top = expectOk(await ws.owner.post(`/api/v1/channels/${c}/messages`, { content: 'level two words' }), 201).data;
    const reply = expectOk(await ws.owner.post(`/api/v1/channels/${c}/messages`, { content: 'a reply', thread_id: top.id }), 201).data;
    const { rows } = await stack().rt.db.raw('SELECT count(*)::int AS n FROM message_search WHERE message_id IN (?, ?)', [top.id, reply.id]);
    expect(rows[0].n).to.equal(0);
  });
});
