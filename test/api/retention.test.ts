// Retention (contract §16, any level; docs/operations.md "Retention"): the
// settings, and the job that deletes what is older than them: messages with
// their replies, reactions, edits, search words and files (the stored objects
// too), in small batches, over a table of a million rows.
import { expect } from 'chai';
import type { Knex } from 'knex';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createDb } from '../../shared/db/knex.js';
import { QUEUE_NAME, queuePrefix } from '../../shared/jobs.js';
import { runRetention } from '../../services/core/retention/retention.jobs.js';
import { expectError, expectOk } from '../support/expect.js';
import { bucketKeys, uploadFile, waitFor } from '../support/files.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

const DAY = 24 * 3600 * 1000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);

async function post(ws: TestWorkspace, channelId: string, body: Record<string, unknown>) {
  return expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, body), 201).data;
}

/** Moves a message (and its replies with it, when asked) into the past. */
const backdate = (ids: string[], when: Date) => stack().rt.db('messages').whereIn('id', ids).update({ created_at: when });

describe('retention settings', () => {
  it('sets the workspace and channel retention for owners and admins only, at least 1 day, null for ever', async () => {
    const ws = await newWorkspace();
    const admin = await ws.user({ role: 'admin' });
    const member = await ws.user();
    const channel = expectOk(await member.client.post('/api/v1/channels', { name: uniqueName('r') }), 201).data;
    expectOk(await admin.client.patch('/api/v1/workspaces/current', { settings: { retention_days: 90 } }));
    expect((await stack().rt.db('workspaces').where({ id: ws.workspaceId }).first()).settings.retention_days).to.equal(90);
    expectOk(await admin.client.patch(`/api/v1/channels/${channel.id}`, { retention_days: 1 }));
    expectOk(await ws.owner.patch(`/api/v1/channels/${channel.id}`, { retention_days: null }));
    expect(await stack().rt.db('channels').where({ id: channel.id }).first('retention_days', 'retention_set')).to.deep.equal({ retention_days: null, retention_set: true });
    for (const bad of [0, -1, 1.5, '30', 36_501]) {
      expectError(await ws.owner.patch('/api/v1/workspaces/current', { settings: { retention_days: bad } }), 400, 'validation_error');
      expectError(await ws.owner.patch(`/api/v1/channels/${channel.id}`, { retention_days: bad }), 400, 'validation_error');
    }
    // A member of the channel may rename it, not set how long it keeps its messages.
    expectError(await member.client.patch(`/api/v1/channels/${channel.id}`, { retention_days: 5 }), 403, 'forbidden');
    expectError(await member.client.patch('/api/v1/workspaces/current', { settings: { retention_days: 5 } }), 403, 'forbidden');
    expect(await stack().rt.db('channels').where({ id: channel.id }).first('retention_days')).to.deep.equal({ retention_days: null });
  });

  it('leaves the level-2 Workspace object as it was, and shows the setting at level 3', async () => {
    const ws = await newWorkspace();
    const set = expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { retention_days: 30 } }));
    expect(set.data.settings).to.deep.equal({ max_users: null });
    expect(expectOk(await ws.owner.get('/api/v1/workspaces/current')).data.settings).to.deep.equal({ max_users: null });
    const s3 = await level3Stack();
    const ws3 = await newWorkspace(s3);
    expect(expectOk(await ws3.owner.get('/api/v1/workspaces/current')).data.settings).to.deep.equal({ max_users: null, retention_days: null });
    expect(expectOk(await ws3.owner.patch('/api/v1/workspaces/current', { settings: { retention_days: 30 } })).data.settings).to.deep.equal({ max_users: null, retention_days: 30 });
  });
});

describe('the retention job', function () {
  this.timeout(60_000);

  it('is scheduled daily by the worker, at level 2 too', async () => {
    const rt = stack().rt;
    expect(rt.config.featureLevel).to.equal(2);
    const connection = new Redis(rt.config.redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_NAME, { connection, prefix: queuePrefix(rt.config) });
    try {
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.find((j) => j.key === 'retention.sweep')).to.include({ every: 24 * 3600 * 1000 });
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });

  it('deletes what is older than the setting with its replies, reactions, edits, search words and files, and keeps the rest', async () => {
    const ws = await newWorkspace();
    const db = stack().rt.db;
    const mk = async (name: string) => expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName(name) }), 201).data.id as string;
    const [general, forever, weekly] = [await mk('general'), await mk('forever'), await mk('weekly')];
    expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { retention_days: 30 } }));
    expectOk(await ws.owner.patch(`/api/v1/channels/${forever}`, { retention_days: null }));
    expectOk(await ws.owner.patch(`/api/v1/channels/${weekly}`, { retention_days: 7 }));

    // general (30 days): an old thread with a recent reply, an old message with a reaction, an edit and search words, an old file message, a recent one.
    const oldRoot = await post(ws, general, { content: 'old root' });
    const reply = expectOk(await ws.owner.post(`/api/v1/channels/${general}/messages`, { content: 'new reply', thread_id: oldRoot.id }), 201).data;
    const reacted = await post(ws, general, { content: 'old reacted' });
    expect((await ws.owner.post(`/api/v1/channels/${general}/messages/${reacted.id}/reactions`, { emoji: 'tada' })).status).to.be.oneOf([200, 201, 204]);
    await db('message_edits').insert({ message_id: reacted.id, content: 'before', edited_at: new Date() });
    await db('message_search').insert({ message_id: reacted.id, workspace_id: ws.workspaceId, channel_id: general, seq: 1, words: db.raw("to_tsvector('simple', 'old reacted')") });
    const upload = await uploadFile(stack().url, { key: ws.ownerKey, size: 2048, name: 'report.bin' });
    expect(upload.status).to.equal(201);
    const fileId = upload.body.data.id as string;
    await waitFor(async () => (await db('files').where({ id: fileId }).first())?.status === 'ready', 'the file to be processed');
    const fileMessage = await post(ws, general, { content: 'Shared a file: report.bin', metadata: { type: 'axid.file', data: { file_id: fileId, name: 'report.bin' } } });
    const recent = await post(ws, general, { content: 'recent' });
    // forever: older than anything, kept. weekly (7 days): 10 days old goes, 3 days old stays.
    const ancient = await post(ws, forever, { content: 'ancient' });
    const tenDays = await post(ws, weekly, { content: 'ten days' });
    const threeDays = await post(ws, weekly, { content: 'three days' });

    await backdate([oldRoot.id, reacted.id, fileMessage.id], daysAgo(31));
    await backdate([ancient.id], daysAgo(3000));
    await backdate([tenDays.id], daysAgo(10));
    await backdate([threeDays.id], daysAgo(3));
    expect(await bucketKeys(stack(), `files/${ws.workspaceId}/${fileId}`)).to.have.length(1);

    const counts = await runRetention(stack().rt);
    expect(counts.messages).to.be.at.least(5);
    expect(counts.files).to.be.at.least(1);

    const left = (await db('messages').whereIn('channel_id', [general, forever, weekly]).pluck('id')) as string[];
    expect(left).to.have.members([recent.id, ancient.id, threeDays.id]);
    expect(left).to.not.include(reply.id);
    for (const table of ['reactions', 'message_edits', 'message_search']) {
      expect(await db(table).where({ message_id: reacted.id }), table).to.have.length(0);
    }
    expect(await db('threads').where({ root_message_id: oldRoot.id })).to.have.length(0);
    expect(await db('files').where({ id: fileId })).to.have.length(0);
    expect(await bucketKeys(stack(), `files/${ws.workspaceId}/${fileId}`)).to.have.length(0);

    // Through the API: gone is gone, and the history page still pages.
    expectError(await ws.owner.get(`/api/v1/channels/${general}/messages/${oldRoot.id}`), 404, 'not_found');
    const page = expectOk(await ws.owner.get(`/api/v1/channels/${general}/messages?limit=1`));
    expect(page.data.map((m: { id: string }) => m.id)).to.deep.equal([recent.id]);
    expect(page.pagination.has_more).to.equal(false);
  });

  it('walks posted messages oldest first in batches up to the first kept, and finds imported history written behind newer posts', async () => {
    // Migration 250: posted messages are walked by seq; those that published no event (imported) come by their own index.
    const ws = await newWorkspace();
    const db = stack().rt.db;
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('walk') }), 201).data.id as string;
    expectOk(await ws.owner.patch(`/api/v1/channels/${channel}`, { retention_days: 30 }));
    const posted: string[] = [];
    for (let i = 0; i < 12; i++) posted.push((await post(ws, channel, { content: `posted ${i}` })).id);
    // The first seven aged in the order they were posted (40 down to 34 days), the rest recent.
    for (let i = 0; i < 7; i++) await backdate([posted[i]!], daysAgo(40 - i));
    // Then history imported into the channel (as the Slack import writes it: no event), later in seq than every post: two old, one recent.
    const imported = (
      await db('messages')
        .insert([daysAgo(400), daysAgo(31), daysAgo(2)].map((created_at, i) => ({ workspace_id: ws.workspaceId, channel_id: channel, author_id: ws.ownerId, content: `imported ${i}`, created_at })))
        .returning('id')
    ).map((r: { id: string }) => r.id);
    expect(await db('messages').whereIn('id', imported).whereNotNull('event_xid')).to.have.length(0);

    // Batches of 3: the walk takes three posted messages at a time, the imported ones join in.
    await runRetention(stack().rt, { batch: 3 });
    expect(await db('messages').where({ channel_id: channel }).pluck('id')).to.have.members([...posted.slice(7), imported[2]]);
  });

  it('reaches DMs too, and prunes audit entries older than AUDIT_RETENTION_DAYS', async () => {
    const ws = await newWorkspace();
    const db = stack().rt.db;
    const other = await ws.user();
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data;
    const old = expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: 'old dm' }), 201).data;
    const kept = expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: 'new dm' }), 201).data;
    expectOk(await ws.owner.patch('/api/v1/workspaces/current', { settings: { retention_days: 2 } }));
    await backdate([old.id], daysAgo(3));
    const [entry] = await db('audit_log').where({ workspace_id: ws.workspaceId }).orderBy('seq').limit(1);
    await db('audit_log').where({ id: entry.id }).update({ created_at: daysAgo(stack().rt.config.auditRetentionDays + 1) });
    const recentEntries = await db('audit_log').where({ workspace_id: ws.workspaceId }).whereNot({ id: entry.id }).pluck('id');

    await runRetention(stack().rt);
    expect(await db('messages').where({ channel_id: dm.id }).pluck('id')).to.deep.equal([kept.id]);
    expect(await db('audit_log').where({ id: entry.id })).to.have.length(0);
    expect(await db('audit_log').where({ workspace_id: ws.workspaceId }).pluck('id')).to.have.members(recentEntries);
  });
});

describe('the retention job on a million rows', function () {
  this.timeout(900_000);
  let db: Knex;
  const durations: { ms: number; sql: string }[] = [];

  before(() => {
    // A pool of the test's own whose every statement is timed.
    db = createDb(stack().rt.config.databaseUrl, 2);
    const started = new Map<string, number>();
    db.on('query', (q: { __knexQueryUid: string }) => started.set(q.__knexQueryUid, performance.now()));
    db.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => {
      const t = started.get(q.__knexQueryUid);
      started.delete(q.__knexQueryUid);
      if (t !== undefined) durations.push({ ms: performance.now() - t, sql: q.sql });
    });
  });
  after(async () => {
    await db?.destroy();
  });

  it('deletes the old part in small batches, no statement over a second', async () => {
    const ws = await newWorkspace();
    const channel = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('big') }), 201).data.id as string;
    const rt = stack().rt;
    // A million top-level messages, one every 30 s: the oldest 200,000 or so beyond 400 days, the rest kept
    // (on the test's own pool: the stack's bounds its statements to 5 s).
    await db.raw(
      `INSERT INTO messages (workspace_id, channel_id, author_id, content, created_at)
       SELECT ?, ?, ?, 'message ' || g, now() - make_interval(secs => (1000000 - g) * 30) - interval '122 days'
         FROM generate_series(1, 1000000) g`,
      [ws.workspaceId, channel, ws.ownerId],
    );
    await db.raw('ANALYZE messages');
    const cutoffDays = 400;
    const expected = Number((await rt.db('messages').where({ channel_id: channel }).where('created_at', '<', daysAgo(cutoffDays)).count('* as c').first())!.c);
    expect(expected).to.be.within(150_000, 250_000);
    await rt.db('channels').where({ id: channel }).update({ retention_days: cutoffDays, retention_set: true });

    durations.length = 0;
    const counts = await runRetention({ ...rt, db });
    expect(counts.messages).to.equal(expected);
    expect(Number((await rt.db('messages').where({ channel_id: channel }).count('* as c').first())!.c)).to.equal(1_000_000 - expected);
    const slowest = durations.reduce((a, b) => (b.ms > a.ms ? b : a));
    console.log(`      ${durations.length} statements, slowest ${slowest.ms.toFixed(1)} ms: ${slowest.sql.slice(0, 80)}`);
    expect(slowest.ms, slowest.sql).to.be.below(1000);
    await db('messages').where({ channel_id: channel }).delete();
  });
});
