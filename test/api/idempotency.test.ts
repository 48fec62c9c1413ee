// Idempotent posting (level 3, contract §9): Idempotency-Key on the five
// create endpoints, per caller, 24 h; replay, 422 on another body, 409 while
// the first runs. The crash between commit and answer: test/processes/idempotency-crash.test.ts.
import { expect } from 'chai';
import pg from 'pg';
import { expectError, expectOk } from '../support/expect.js';
import { Client } from '../support/client.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import { sweepIdempotencyKeys } from '../../shared/http/idempotency.js';
import type { Stack } from '../../services/stack.js';

const KEY = 'Idempotency-Key';
const keyed = (key: string) => ({ [KEY]: key });
const newKey = () => uniqueName('key');

describe('Idempotency-Key (level 3)', () => {
  let s: Stack;
  let ws: TestWorkspace;
  let channelId: string;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
    channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
  });
  const messagesIn = async (id: string) => (await s.rt.db('messages').where({ channel_id: id }).count('* as n').first())!.n as number;

  it('answers a repeated key with the same body by the first status and body and Idempotent-Replayed: true, creating nothing', async () => {
    const key = newKey();
    const body = { content: 'deploy finished', metadata: { type: 'ci', data: { run: 7 } } };
    const first = await ws.owner.post(`/api/v1/channels/${channelId}/messages`, body, keyed(key));
    expectOk(first, 201);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    for (let i = 0; i < 2; i++) {
      const again = await ws.owner.post(`/api/v1/channels/${channelId}/messages`, body, keyed(key));
      expectOk(again, 201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.text).to.equal(first.text);
      expect(again.headers.get('content-type')).to.equal(first.headers.get('content-type'));
    }
    expect(await messagesIn(channelId)).to.equal(1);
    // Without the key, or with another one, a post is a new message.
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, body), 201);
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, body, keyed(newKey())), 201);
    expect(await messagesIn(channelId)).to.equal(3);
  });

  it('answers 422 idempotency_key_reused for the same key with another body or on another endpoint, and keeps keys per caller', async () => {
    const key = newKey();
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'a' }, keyed(key)), 201);
    expectError(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'b' }, keyed(key)), 422, 'idempotency_key_reused');
    expectError(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }, keyed(key)), 422, 'idempotency_key_reused');
    const other = await ws.user();
    expectOk(await other.client.post(`/api/v1/channels/${channelId}/members`, { user_id: other.id }), 201);
    const theirs = await other.client.post(`/api/v1/channels/${channelId}/messages`, { content: 'a' }, keyed(key));
    expectOk(theirs, 201);
    expect(theirs.headers.get('idempotent-replayed')).to.equal(null);
    expect(await messagesIn(channelId)).to.equal(2);
  });

  it('replays the same body sent with its keys in another order or other white space, at every level of nesting; a changed value is still 422', async () => {
    const url = `/api/v1/channels/${channelId}/messages`;
    const json = { 'content-type': 'application/json' };
    const key = newKey();
    const first = await ws.owner.post(url, '{"content":"deploy","metadata":{"type":"ci","data":{"run":7,"env":{"name":"prod","region":"eu"}}}}', { ...json, ...keyed(key) });
    expectOk(first, 201);
    const sameBodies = [
      '{"metadata":{"data":{"env":{"region":"eu","name":"prod"},"run":7},"type":"ci"},"content":"deploy"}',
      '{ "metadata" : { "type" : "ci", "data" : { "env" : { "name" : "prod", "region" : "eu" }, "run" : 7 } },\n  "content" : "deploy" }',
      // Escapes and number spellings parse to the same values.
      String.raw`{"metadata":{"type":"ci","data":{"run":7.0,"env":{"region":"eu","name":"prod"}}},"content":"\u0064eploy"}`,
    ];
    for (const body of sameBodies) {
      const again = await ws.owner.post(url, body, { ...json, ...keyed(key) });
      expectOk(again, 201);
      expect(again.headers.get('idempotent-replayed'), body).to.equal('true');
      expect(again.text).to.equal(first.text);
    }
    for (const body of ['{"metadata":{"data":{"env":{"region":"us","name":"prod"},"run":7},"type":"ci"},"content":"deploy"}', '{"content":"deploy","metadata":{"type":"ci","data":{"run":7,"env":{"name":"prod","region":"eu"},"extra":null}}}']) {
      expectError(await ws.owner.post(url, body, { ...json, ...keyed(key) }), 422, 'idempotency_key_reused');
    }
    // A webhook post the same way.
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channelId, name: 'CI' }), 201).data;
    const anonymous = new Client(s.url);
    const hookKey = newKey();
    expectOk(await anonymous.post(`/hooks/${hook.id}`, '{"content":"built","metadata":{"type":"ci","data":{"a":1,"b":2}}}', { ...json, ...keyed(hookKey) }), 201);
    const replayed = await anonymous.post(`/hooks/${hook.id}`, '{"metadata":{"data":{"b":2,"a":1},"type":"ci"},"content":"built"}', { ...json, ...keyed(hookKey) });
    expectOk(replayed, 201);
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    expect(await messagesIn(channelId)).to.equal(2);
  });

  it('gives one 201 and one 409 idempotency_in_progress to two concurrent requests with one key, and one message', async () => {
    const key = newKey();
    // Holds the first request inside its transaction (its key cannot be written yet) while the second arrives.
    const blocker = new pg.Client({ connectionString: s.rt.config.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE idempotency_keys IN EXCLUSIVE MODE');
      const first = ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'once' }, keyed(key));
      // Wait until the first, holding its key's lock, waits for the table to write its answer.
      for (let i = 0; i < 400; i++) {
        const { rows } = await blocker.query(`SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'idempotency_keys'::regclass AND NOT granted`);
        if (rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      const second = await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'once' }, keyed(key));
      expectError(second, 409, 'idempotency_in_progress');
      await blocker.query('COMMIT');
      expectOk(await first, 201);
    } finally {
      await blocker.end();
    }
    expect(await messagesIn(channelId)).to.equal(1);
    const replay = await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'once' }, keyed(key));
    expect(replay.status).to.equal(201);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('covers POST /dms/{id}/messages, POST /dms (201 then 201 replayed) and POST /channels', async () => {
    const other = await ws.user();
    const dmKey = newKey();
    const dm = await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }, keyed(dmKey));
    expectOk(dm, 201);
    const dmAgain = await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }, keyed(dmKey));
    expect(dmAgain.status).to.equal(201);
    expect(dmAgain.text).to.equal(dm.text);
    expect(dmAgain.headers.get('idempotent-replayed')).to.equal('true');
    expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 200);

    const key = newKey();
    for (let i = 0; i < 2; i++) expectOk(await ws.owner.post(`/api/v1/dms/${dm.body.data.id}/messages`, { content: 'hi' }, keyed(key)), 201);
    expect(await messagesIn(dm.body.data.id)).to.equal(1);

    const channelKey = newKey();
    const name = uniqueName('c');
    const created = expectOk(await ws.owner.post('/api/v1/channels', { name }, keyed(channelKey)), 201).data;
    const again = await ws.owner.post('/api/v1/channels', { name }, keyed(channelKey));
    expect(again.status).to.equal(201);
    expect(again.body.data).to.deep.equal(created);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    // Without the key the name is taken: the replay did not create a second.
    expectError(await ws.owner.post('/api/v1/channels', { name }), 409, 'name_taken');
  });

  it('keys a webhook post per webhook', async () => {
    const hook = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channelId, name: 'CI' }), 201).data;
    const other = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channelId, name: 'CD' }), 201).data;
    const anonymous = new Client(s.url);
    const key = newKey();
    const first = await anonymous.post(`/hooks/${hook.id}`, { content: 'build 42 passed' }, keyed(key));
    expectOk(first, 201);
    const again = await anonymous.post(`/hooks/${hook.id}`, { content: 'build 42 passed' }, keyed(key));
    expect(again.status).to.equal(201);
    expect(again.text).to.equal(first.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expectError(await anonymous.post(`/hooks/${hook.id}`, { content: 'build 43 passed' }, keyed(key)), 422, 'idempotency_key_reused');
    expectOk(await anonymous.post(`/hooks/${other.id}`, { content: 'build 42 passed' }, keyed(key)), 201);
    expect(await messagesIn(channelId)).to.equal(2);
  });

  it('answers 404 to a repeated key once the hook is gone (deleted, its creator removed), instead of replaying its 201', async () => {
    const anonymous = new Client(s.url);
    const member = await ws.user({ role: 'admin' });
    expectOk(await member.client.post(`/api/v1/channels/${channelId}/members`, { user_id: member.id }), 201);
    const deleted = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: channelId, name: 'CI' }), 201).data;
    const orphaned = expectOk(await member.client.post('/api/v1/webhooks/incoming', { channel_id: channelId, name: 'CD' }), 201).data;
    const key = newKey();
    for (const hook of [deleted, orphaned]) {
      expectOk(await anonymous.post(`/hooks/${hook.id}`, { content: 'build 42 passed' }, keyed(key)), 201);
      // Replayed while the hook is there.
      expect((await anonymous.post(`/hooks/${hook.id}`, { content: 'build 42 passed' }, keyed(key))).headers.get('idempotent-replayed')).to.equal('true');
    }
    expectOk(await ws.owner.delete(`/api/v1/webhooks/incoming/${deleted.id}`), 204);
    expectOk(await ws.owner.delete(`/api/v1/workspaces/current/members/${member.id}`), 204);
    for (const hook of [deleted, orphaned]) {
      const again = await anonymous.post(`/hooks/${hook.id}`, { content: 'build 42 passed' }, keyed(key));
      expectError(again, 404, 'not_found');
      expect(again.headers.get('idempotent-replayed')).to.equal(null);
      // The same as without a key.
      expectError(await anonymous.post(`/hooks/${hook.id}`, { content: 'build 42 passed' }), 404, 'not_found');
    }
    expect(await messagesIn(channelId)).to.equal(2);
  });

  it('answers 400 validation_error for a key that is not 1 to 255 printable ASCII characters, and keeps nothing for a refused request', async () => {
    for (const bad of ['x'.repeat(256), 'tab\there', 'ünïcode']) {
      const res = await fetch(`${s.url}/api/v1/channels/${channelId}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ws.ownerKey}`, 'content-type': 'application/json', [KEY]: Buffer.from(bad).toString('latin1') },
        body: JSON.stringify({ content: 'x' }),
      });
      expect(res.status, bad).to.equal(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('validation_error');
    }
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'x' }, keyed(' spaces are printable ')), 201);
    // A refused request keeps no answer: the same key then works.
    const key = newKey();
    expectError(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: '   ' }, keyed(key)), 400, 'validation_error');
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'fixed' }, keyed(key)), 201);
    expect(await messagesIn(channelId)).to.equal(2);
  });

  it('forgets keys after 24 h: an expired key posts anew, and the sweep deletes expired answers only', async () => {
    const key = newKey();
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'old' }, keyed(key)), 201);
    const caller = `u:${ws.ownerId}`;
    await s.rt.db('idempotency_keys').where({ caller, key }).update({ created_at: s.rt.db.raw(`now() - interval '25 hours'`) });
    const fresh = await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'old' }, keyed(key));
    expectOk(fresh, 201);
    expect(fresh.headers.get('idempotent-replayed')).to.equal(null);
    expect(await messagesIn(channelId)).to.equal(2);

    const kept = newKey();
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/messages`, { content: 'kept' }, keyed(kept)), 201);
    await s.rt.db('idempotency_keys').where({ caller, key }).update({ created_at: s.rt.db.raw(`now() - interval '25 hours'`) });
    expect(await sweepIdempotencyKeys(s.rt)).to.be.at.least(1);
    expect((await s.rt.db('idempotency_keys').where({ caller }).pluck('key')).sort()).to.deep.equal([kept]);
  });

  it('is ignored at level 2: the same key twice posts twice, with no replay header', async () => {
    const ws2 = await newWorkspace(stack());
    const c = expectOk(await ws2.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    const key = newKey();
    for (let i = 0; i < 2; i++) {
      const res = await ws2.owner.post(`/api/v1/channels/${c}/messages`, { content: 'same' }, keyed(key));
      expectOk(res, 201);
      expect(res.headers.get('idempotent-replayed')).to.equal(null);
    }
    expect((await stack().rt.db('messages').where({ channel_id: c }).count('* as n').first())!.n).to.equal(2);
  });
});
