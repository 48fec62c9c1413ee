import { expect } from 'chai';
import type { Knex } from 'knex';
import { createDb, ensureDatabase } from '../../shared/db/knex.js';
import { migrateLatest, migrationSource } from '../../shared/db/migrate.js';
import { listMessages, messageSqlAt } from '../../services/core/messages/messages.store.js';
import { testEnv, type TestEnv } from '../support/stack.js';

describe('migrations on a database with data', () => {
  let env: TestEnv;
  let db: Knex;

  before(async () => {
    env = testEnv();
    await ensureDatabase(env.config.databaseUrl);
    db = createDb(env.config.databaseUrl, 2);
  });

  after(async () => {
    await db?.destroy();
    await env?.cleanup();
  });

  it('004 marks the messages that already have replies or reactions, so history pages still show them', async () => {
    for (const name of ['001_core', '003_files_webhooks']) await db.migrate.up({ migrationSource, name });
    const [ws] = await db('workspaces').insert({ name: 'w' }).returning('id');
    const [user] = await db('users').insert({ workspace_id: ws.id, name: 'u', role: 'owner' }).returning('id');
    const [channel] = await db('channels').insert({ workspace_id: ws.id, name: 'c', created_by: user.id }).returning('id');
    const row = { workspace_id: ws.id, channel_id: channel.id, author_id: user.id };
    const [root] = await db('messages').insert({ ...row, content: 'root' }).returning('id');
    const [plain] = await db('messages').insert({ ...row, content: 'plain', metadata: JSON.stringify({ type: 't', data: { b: 1, a: [2.5] } }) }).returning('id');
    await db('messages').insert({ ...row, content: 'reply', thread_id: root.id });
    await db('threads').insert({ root_message_id: root.id, workspace_id: ws.id, channel_id: channel.id, reply_count: 1, last_reply_at: new Date() });
    await db('reactions').insert({ message_id: plain.id, user_id: user.id, emoji: 'tada' });

    // Later migrations follow these four.
    expect((await migrateLatest(db)).slice(0, 4)).to.deep.equal(['004_message_page_hints', '005_message_insert_checks', '006_job_outbox', '007_message_json_as_written']);

    const page = JSON.parse((await listMessages(db, messageSqlAt(2), { channelId: channel.id, limit: 50 })).data) as Record<string, any>[];
    expect(page.map((m) => m.content)).to.deep.equal(['plain', 'root']);
    expect(page[0]!.reactions).to.deep.equal([{ emoji: 'tada', count: 1, user_ids: [user.id] }]);
    expect(page[1]!.thread).to.include({ reply_count: 1 });
    // 007 keeps what jsonb held, now as json text.
    expect(page[0]!.metadata).to.deep.equal({ type: 't', data: { a: [2.5], b: 1 } });
    expect((await db.raw(`SELECT pg_typeof(metadata)::text AS t FROM messages WHERE id = ?`, [plain.id])).rows[0].t).to.equal('json');
  });
});
