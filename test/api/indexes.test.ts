import pg from 'pg';
import { expect } from 'chai';
import * as messages from '../../services/core/messages/messages.store.js';
import * as dms from '../../services/core/dms/dms.store.js';
import * as channels from '../../services/core/channels/channels.store.js';
import { newWorkspace, stack } from '../support/stack.js';
import { AVATAR_FILE_ID, CARRIED_FILE_ID, CARRIES_A_FILE } from '../../shared/db/migrations/120_file_carriers.js';

async function explain(sql: string): Promise<string> {
  const db = stack().rt.db;
  const res = await db.raw(`EXPLAIN ${sql}`);
  return (res.rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
}

/** The plan a prepared statement settles on: the generic one, as after a few executions on a connection. */
async function explainGeneric(statement: { text: string }, values: unknown[], o: { noSeqScan?: boolean } = {}): Promise<string> {
  const client = new pg.Client({ connectionString: stack().rt.config.databaseUrl });
  await client.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    // Where the tables are too small here for the planner to prefer an index unforced.
    if (o.noSeqScan) await client.query('SET enable_seqscan = off');
    const res = await client.query({ text: `EXPLAIN ${statement.text}`, values });
    return (res.rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.end();
  }
}

/**
 * How many entries of an index lead to one channel's rows, read off the index's own leaf pages (pageinspect). Counting
 * the whole index would count other tests too: a page split may drop their dead entries at any moment.
 */
async function indexEntries(index: string, channelId: string): Promise<number> {
  const db = stack().rt.db;
  await db.raw('CREATE EXTENSION IF NOT EXISTS pageinspect');
  const res = await db.raw(
    `SELECT count(*) AS entries
       FROM generate_series(1, pg_relation_size(?::regclass) / current_setting('block_size')::int - 1) AS page
       CROSS JOIN LATERAL bt_page_items(?, page::int) AS item
       CROSS JOIN LATERAL unnest(coalesce(item.tids, ARRAY[item.htid])) AS tid
       JOIN messages ON messages.ctid = tid
      WHERE (bt_page_stats(?, page::int)).type = 'l' AND messages.channel_id = ?`,
    [index, index, index, channelId],
  );
  return Number(res.rows[0].entries);
}

describe('indexes of the hot paths', () => {
  let channelId: string;
  let rootId: string;
  let ownerId: string;
  let workspaceId: string;

  before(async function () {
    this.timeout(60_000);
    const ws = await newWorkspace();
    ownerId = ws.ownerId;
    workspaceId = ws.workspaceId;
    const db = stack().rt.db;
    // 20 channels of 250 top-level messages, and replies in one thread: a few thousand rows.
    const channels = await db('channels')
      .insert(Array.from({ length: 20 }, (_, i) => ({ workspace_id: workspaceId, name: `idx-${i}`, created_by: ownerId })))
      .returning('id');
    channelId = channels[0].id;
    for (const c of channels) {
      await db.raw(
        `INSERT INTO messages (workspace_id, channel_id, author_id, content)
         SELECT ?, ?, ?, 'message ' || g FROM generate_series(1, 250) g`,
        [workspaceId, c.id, ownerId],
      );
    }
    rootId = (await db('messages').where({ channel_id: channelId }).orderBy('seq').first('id')).id;
    await db.raw(
      `INSERT INTO messages (workspace_id, channel_id, author_id, thread_id, content)
       SELECT ?, ?, ?, ?, 'reply ' || g FROM generate_series(1, 500) g`,
      [workspaceId, channelId, ownerId, rootId],
    );
    await db.raw('ANALYZE messages; ANALYZE threads; ANALYZE reactions; ANALYZE channels; ANALYZE channel_members');
  });

  it('serves the channel history page without a sequential scan of messages', async () => {
    for (const before of [messages.NO_CURSOR, '1000000']) {
      const plan = await explainGeneric(messages.CHANNEL_PAGE, [channelId, before, 50]);
      expect(plan).not.to.match(/Seq Scan on messages/);
      expect(plan).to.match(/messages_channel_seq/);
    }
  });

  it('sets up no plan for threads or reactions in a history page: they are read by function only for messages whose hints say so', async () => {
    // A subquery would be set up (its table and index opened and locked) on every execution, needed or not (migration 240).
    const level3 = messages.messageSqlAt(3).bothWays!;
    for (const statement of [messages.CHANNEL_PAGE, messages.THREAD_PAGE, level3.channel.older, level3.thread.older]) {
      const plan = await explainGeneric(statement, [channelId, messages.NO_CURSOR, 50]);
      expect(plan, plan).not.to.match(/ on (threads|reactions)\b|_pkey/);
    }
  });

  it('plans each history statement once per connection: the generic plan is kept, not a new plan per page', async () => {
    // Postgres plans a prepared statement anew while its generic plan looks dearer than the custom ones; with the
    // limit and the cursor in sight that was every page (the newest page's cursor takes in the whole channel).
    // A busy channel: the parameter's limit, estimated at a tenth of a third of its rows, is then well over 51.
    const db = stack().rt.db;
    const [busy] = await db('channels').insert({ workspace_id: workspaceId, name: 'idx-busy', created_by: ownerId }).returning('id');
    await db.raw(`INSERT INTO messages (workspace_id, channel_id, author_id, content) SELECT ?, ?, ?, 'busy ' || g FROM generate_series(1, 5000) g`, [workspaceId, busy.id, ownerId]);
    await db.raw('ANALYZE messages');
    const client = new pg.Client({ connectionString: stack().rt.config.databaseUrl });
    await client.connect();
    try {
      const level3 = messages.messageSqlAt(3).bothWays!;
      const { id: middle, seq } = await db('messages').where({ channel_id: busy.id }).orderBy('seq').offset(2500).first('id', 'seq');
      const cases: [{ name: string; text: string }, unknown[][]][] = [
        [messages.CHANNEL_PAGE, [[busy.id, messages.NO_CURSOR, 50], [busy.id, String(seq), 20]]],
        [messages.THREAD_PAGE, [[rootId, messages.NO_CURSOR, 50]]],
        [level3.channel.older, [[busy.id, messages.NO_CURSOR, 50], [busy.id, String(seq), 200]]],
        [level3.channel.newer, [[busy.id, String(seq), 50]]],
        [level3.channel.around, [[busy.id, middle, 50, 24]]],
        [level3.thread.older, [[rootId, messages.NO_CURSOR, 50]]],
      ];
      for (const [statement, valueSets] of cases) for (let i = 0; i < 12; i++) await client.query({ ...statement, values: valueSets[i % valueSets.length] });
      const { rows } = await client.query<{ name: string; generic_plans: string; custom_plans: string }>('SELECT name, generic_plans, custom_plans FROM pg_prepared_statements');
      const plans = new Map(rows.map((r) => [r.name, r]));
      for (const [statement] of cases) {
        const counts = plans.get(statement.name)!;
        // Postgres plans the first five custom, then compares: from the sixth on the generic plan serves.
        expect(Number(counts.custom_plans), `${statement.name}: ${JSON.stringify(counts)}`).to.be.at.most(5);
        expect(Number(counts.generic_plans), statement.name).to.be.at.least(7);
      }
    } finally {
      await client.end();
    }
  });

  it('gives the author index an entry only for messages in a thread: a top-level post without replies pays nothing for it', async () => {
    // The followed threads' candidates (migration 241), counted in the index itself, before and after.
    const db = stack().rt.db;
    const [channel] = await db('channels').insert({ workspace_id: workspaceId, name: 'idx-author', created_by: ownerId }).returning('id');
    const entries = () => indexEntries('messages_author_thread_seq', channel.id);
    const roots = await db('messages')
      .insert(Array.from({ length: 200 }, (_, i) => ({ workspace_id: workspaceId, channel_id: channel.id, author_id: ownerId, content: `top ${i}` })))
      .returning('id');
    expect(await entries(), 'top-level posts').to.equal(0);
    // Three replies, posted as the API does (the root's hint set), and their root.
    for (let i = 0; i < 3; i++) {
      await db('messages').insert({ workspace_id: workspaceId, channel_id: channel.id, author_id: ownerId, thread_id: roots[0].id, content: `reply ${i}` });
    }
    await db('messages').where({ id: roots[0].id }).update({ has_replies: true });
    expect(await entries(), 'replies and their root').to.equal(4);
  });

  it("gives retention's index no entry for a posted top-level message, only for history that published no event (migration 250)", async () => {
    const db = stack().rt.db;
    const [channel] = await db('channels').insert({ workspace_id: workspaceId, name: 'idx-retention', created_by: ownerId }).returning('id');
    const entries = () => indexEntries('messages_unpublished_channel_created', channel.id);
    // Posted: the message is its own event (event_xid), as the API writes it.
    await db.raw(
      `INSERT INTO messages (workspace_id, channel_id, author_id, content, event_xid)
       SELECT ?, ?, ?, 'posted ' || g, pg_current_xact_id() FROM generate_series(1, 200) g`,
      [workspaceId, channel.id, ownerId],
    );
    expect(await entries(), 'posted top-level messages').to.equal(0);
    // Imported history (no event), and a reply to it (replies go with their root).
    const [root] = await db('messages').insert({ workspace_id: workspaceId, channel_id: channel.id, author_id: ownerId, content: 'imported' }).returning('id');
    await db('messages').insert({ workspace_id: workspaceId, channel_id: channel.id, author_id: ownerId, thread_id: root.id, content: 'imported reply' });
    expect(await entries(), 'imported top-level message').to.equal(1);
    // Retention's two reads go by index, never a sequential scan: the walk on messages_channel_seq, the rest on this
    // index (on a table this small the planner may take either as a bitmap scan and sort).
    const plan = await explain(db.raw('SELECT id FROM messages WHERE channel_id = ? AND thread_id IS NULL ORDER BY seq LIMIT 500', [channelId]).toString());
    expect(plan, plan).to.match(/using messages_channel_seq|on messages_channel_seq/);
    expect(plan, plan).to.not.match(/Seq Scan/);
    const rest = await explain(
      db.raw(`SELECT id FROM messages WHERE channel_id = ? AND thread_id IS NULL AND event_xid IS NULL AND created_at < now() ORDER BY created_at LIMIT 500`, [channelId]).toString(),
    );
    expect(rest, rest).to.match(/(using|on) messages_unpublished_channel_created/);
    expect(rest, rest).to.not.match(/Seq Scan/);
  });

  it('serves a thread replies page without a sequential scan of messages', async () => {
    const plan = await explainGeneric(messages.THREAD_PAGE, [rootId, messages.NO_CURSOR, 50]);
    expect(plan).not.to.match(/Seq Scan on messages/);
    expect(plan).to.match(/messages_thread_seq/);
  });

  it('serves level-3 pages around a message and newer than a cursor on the same indexes', async () => {
    const pages = messages.messageSqlAt(3).bothWays!;
    const { id: middle, seq } = await stack().rt.db('messages').where({ channel_id: channelId }).whereNull('thread_id').orderBy('seq').offset(120).first('id', 'seq');
    const reply = (await stack().rt.db('messages').where({ thread_id: rootId }).orderBy('seq').offset(250).first('id')).id;
    const cases: [string, { text: string }, unknown[], string][] = [
      ['channel around', pages.channel.around, [channelId, middle, 50, 24], 'messages_channel_seq'],
      ['channel newer', pages.channel.newer, [channelId, String(seq), 50], 'messages_channel_seq'],
      ['channel older', pages.channel.older, [channelId, String(seq), 50], 'messages_channel_seq'],
      ['thread around', pages.thread.around, [rootId, reply, 50, 24], 'messages_thread_seq'],
      ['thread newer', pages.thread.newer, [rootId, String(seq), 50], 'messages_thread_seq'],
    ];
    for (const [what, statement, values, index] of cases) {
      const plan = await explainGeneric(statement, values);
      expect(plan, `${what}\n${plan}`).not.to.match(/Seq Scan on messages/);
      expect(plan, what).to.match(new RegExp(index));
    }
  });

  it('has an index for the DM list (the table is too small here for the planner to prefer it unforced)', async () => {
    for (const [before, limited] of [[false, false], [true, false], [false, true]] as const) {
      const values: unknown[] = [ownerId, workspaceId, 51];
      if (before) values.push(1_000_000);
      if (limited) values.push([channelId]);
      const plan = await explainGeneric(dms.CONVERSATION_LIST_STATEMENTS[+before]![+limited]!, values, { noSeqScan: true });
      expect(plan, plan).not.to.match(/Seq Scan on channel_members/);
    }
  });

  it('reads a channel with its membership, a message, and the channel list by their indexes, as statements prepared once', async () => {
    const access = await explainGeneric(channels.FIND_WITH_MEMBERSHIP, [channelId, ownerId, workspaceId], { noSeqScan: true });
    expect(access, access).to.match(/channels_pkey/).and.not.to.match(/Seq Scan/);
    const message = await explainGeneric(messages.FIND_MESSAGE, [rootId, channelId]);
    expect(message, message).to.match(/messages_pkey/).and.not.to.match(/Seq Scan on messages/);
    for (const after of [false, true]) {
      const statement = channels.visibleChannelsStatement({ after, limited: false, membership: true, includeArchived: false });
      const plan = await explainGeneric(statement, after ? [workspaceId, ownerId, 101, 0] : [workspaceId, ownerId, 101], { noSeqScan: true });
      expect(plan, plan).to.match(/channels_workspace_seq/).and.not.to.match(/Seq Scan on channels/);
    }
  });

  it("names every column of a channel row in the prepared statements' list (a new column must be added to CHANNEL_COLUMNS)", async () => {
    const { rows } = await stack().rt.db.raw<{ rows: { column_name: string }[] }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'channels' ORDER BY ordinal_position`,
    );
    const named = channels.CHANNEL_COLUMNS.split(',').map((c) => c.trim().replace(/^c\./, ''));
    expect([...named].sort()).to.deep.equal(rows.map((r) => r.column_name).sort());
  });

  it('finds the messages carrying a file, and a workspace avatar, by their indexes (level 3 file access, migration 120)', async () => {
    const db = stack().rt.db;
    const fileId = '00000000-0000-4000-8000-0000000000f1';
    // A few messages carry files among the thousands that do not.
    const carriers = await db('messages').where({ channel_id: channelId }).whereNull('thread_id').orderBy('seq').limit(5).pluck('id');
    await db('messages').whereIn('id', carriers).update({ metadata: db.raw('?::json', [JSON.stringify({ type: 'axid.file', data: { file_id: fileId } })]) });
    await db.raw('ANALYZE messages; ANALYZE users');
    const queries: [string, string, RegExp][] = [
      ['conversations carrying a file', messages.channelsCarryingFile(db, workspaceId, fileId).toString(), /messages_carried_file/],
      ['messages carrying a file', db('messages').whereRaw(`${CARRIED_FILE_ID} = ? AND ${CARRIES_A_FILE}`, [fileId]).select(db.raw('1')).toString(), /messages_carried_file/],
    ];
    for (const [what, sql, index] of queries) {
      const plan = await explain(sql);
      expect(plan, `${what}\n${plan}`).not.to.match(/Seq Scan on messages/);
      expect(plan, what).to.match(index);
    }
    expect(await messages.isFileCarried(db, fileId)).to.equal(true);
    expect((await messages.channelsCarryingFile(db, workspaceId, fileId)).map((c) => c.channel_id)).to.deep.equal([channelId]);
    await db.transaction(async (trx) => {
      await trx.raw('SET LOCAL enable_seqscan = off');
      const res = await trx.raw(`EXPLAIN SELECT 1 FROM users WHERE workspace_id = ? AND avatar_url LIKE '%/api/v1/files/%' AND ${AVATAR_FILE_ID} = ?`, [workspaceId, fileId]);
      const plan = (res.rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).to.match(/users_avatar_file/);
    });
  });
});

