// Posts that arrive together share one statement (shared/db/row-batch.ts,
// messages.store.ts insertMessage): each is answered once committed, in the
// order the posts came, with the same rows, events and search words as a
// post written alone; a row the statement refuses fails only its own post;
// a database that does not answer fails every post of the statement with a
// 503, and none of them commits later.
import { expect } from 'chai';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { postMessage } from '../../services/core/messages/messages.service.js';
import { insertMessage } from '../../services/core/messages/messages.store.js';
import type { Stack } from '../../services/stack.js';
import { expectOk } from '../support/expect.js';
import { separateStack } from '../support/separate-stack.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

/** The posts' rows as stored: seq, the writing transaction, content. */
async function storedRows(s: Stack, ids: string[]) {
  return (await s.rt.db('messages').whereIn('id', ids).orderBy('seq').select('id', 'seq', 'content', s.rt.db.raw('event_xid::text AS xid'))) as {
    id: string;
    seq: number;
    content: string;
    xid: string;
  }[];
}

describe('posts written together', () => {
  let ws: TestWorkspace;
  let channelId: string;
  beforeEach(async () => {
    ws = await newWorkspace();
    channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
  });
  const post = (s: Stack, content: string) => postMessage(s.rt, { workspaceId: ws.workspaceId, channelId, authorId: ws.ownerId, content });

  it('writes the posts of one turn in one statement, in the order they came, each answered with its own message', async () => {
    const s = stack();
    const sent = Array.from({ length: 25 }, (_, i) => `together ${i}`);
    const answered = await Promise.all(sent.map((content) => post(s, content)));
    expect(answered.map((m) => m.content)).to.deep.equal(sent);
    const rows = await storedRows(
      s,
      answered.map((m) => m.id),
    );
    // One transaction wrote them all, and seq (the channel's order, the event stream's) follows the order of arrival.
    expect(new Set(rows.map((r) => r.xid)).size).to.equal(1);
    expect(rows.map((r) => r.content)).to.deep.equal(sent);
    expect(rows.map((r) => r.id)).to.deep.equal(answered.map((m) => m.id));
    // Each is the message a post alone gives: read back one by one, byte for byte.
    for (const m of answered.slice(0, 3)) {
      expect(expectOk(await ws.owner.get(`/api/v1/channels/${channelId}/messages/${m.id}`)).data).to.deep.equal(JSON.parse(JSON.stringify(m)));
    }
  });

  it('answers every post of a burst through HTTP once, each with its own message, each stored once', async () => {
    const sent = Array.from({ length: 40 }, (_, i) => `burst ${i}`);
    const answers = await Promise.all(sent.map((content) => ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content })));
    expect(answers.map((a) => a.status)).to.deep.equal(sent.map(() => 201));
    expect(answers.map((a) => a.body.data.content)).to.deep.equal(sent);
    const page = expectOk(await ws.owner.get(`/api/v1/channels/${channelId}/messages?limit=100`)).data as { id: string }[];
    expect(new Set(page.map((m) => m.id))).to.deep.equal(new Set(answers.map((a) => a.body.data.id)));
  });

  it('fails only the post whose row the statement refuses; the others of its statement are stored', async () => {
    const s = stack();
    const existing = await post(s, 'already there');
    const row = (content: string, id: string = randomUUID()) => ({
      id,
      workspace_id: ws.workspaceId,
      channel_id: channelId,
      author_id: ws.ownerId,
      thread_id: null,
      content,
      content_json: null,
      metadata: null,
      card_origin: null,
      mentioned_user_ids: [],
      display: null,
      webhook_id: null,
      created_at: new Date(),
      streaming: false,
    });
    // The third reuses a stored id: the statement of all five fails, and each is written again alone.
    const rows = [row('a'), row('b'), row('dup', existing.id), row('c'), row('d')];
    const outcomes = await Promise.allSettled(rows.map((r) => insertMessage(s.rt.db, r, null, false)));
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(((outcomes[2] as PromiseRejectedResult).reason as { code?: string }).code).to.equal('23505');
    const stored = await storedRows(s, [...rows.map((r) => r.id)]);
    expect(stored.map((r) => r.content)).to.deep.equal(['already there', 'a', 'b', 'c', 'd']);
  });

  it('at level 3 writes the search words of every post of the statement', async () => {
    const s3 = await level3Stack();
    const ws3 = await newWorkspace(s3);
    const c3 = expectOk(await ws3.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id as string;
    const word = `zebra${Date.now().toString(36)}`;
    const answered = await Promise.all(
      Array.from({ length: 12 }, (_, i) => postMessage(s3.rt, { workspaceId: ws3.workspaceId, channelId: c3, authorId: ws3.ownerId, content: `${word} number ${i}` })),
    );
    expect(new Set((await storedRows(s3, answered.map((m) => m.id))).map((r) => r.xid)).size).to.equal(1);
    const found = expectOk(await ws3.owner.get(`/api/v1/search/messages?q=${word}&limit=50`)).data as { id: string }[];
    expect(new Set(found.map((m) => m.id))).to.deep.equal(new Set(answered.map((m) => m.id)));
  });
});

describe('posts written together while the database does not answer', function () {
  this.timeout(30_000);

  it('fails every post of the statement with a 503 within its bound, and none commits later', async () => {
    // A short statement bound: lock_timeout is half of it (shared/db/knex.ts).
    const { stack: s, env, stop } = await separateStack({ ROLES: 'api', DB_STATEMENT_TIMEOUT_MS: '600' });
    const blocker = new pg.Client({ connectionString: env.config.databaseUrl });
    try {
      const { workspace_id: workspaceId } = await s.rt.db('users').first('workspace_id');
      const [{ id: channelId }] = await s.rt.db('channels').insert({ workspace_id: workspaceId, name: uniqueName('c') }).returning('id');
      await blocker.connect();
      // Holds every insert into messages until released.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE messages IN EXCLUSIVE MODE');
      const started = Date.now();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => postMessage(s.rt, { workspaceId, channelId, authorId: null, content: `held ${i}` })),
      );
      expect(Date.now() - started).to.be.below(5_000);
      expect(outcomes.map((o) => o.status)).to.deep.equal(Array(6).fill('rejected'));
      for (const o of outcomes) expect(((o as PromiseRejectedResult).reason as { code?: string }).code).to.equal('55P03');
      await blocker.query('ROLLBACK');
      // Refused, not late: nothing of the statement is stored once the lock is gone.
      expect(await s.rt.db('messages').where({ channel_id: channelId }).count({ n: '*' }).first()).to.deep.equal({ n: 0 });
    } finally {
      await blocker.end().catch(() => undefined);
      await stop();
    }
  });
});
