import { expect } from 'chai';
import { driverQueries } from '../support/queries.js';
import { postMessage as post } from '../../services/core/messages/messages.service.js';
import { expectError, expectOk } from '../support/expect.js';
import { createChannel, messagesUrl, postMessage, waitForEvents } from '../support/conversations.js';
import { newWorkspace, stack } from '../support/stack.js';
import type { Client } from '../support/client.js';
import { everyFieldJson, messageSqlAt } from '../../services/core/messages/messages.store.js';
import { MESSAGE_FIELDS, messageFieldsAt, type MessageField } from '../../services/core/messages/messages.presenter.js';

const countMessages = async (channelId: string) =>
  Number((await stack().rt.db('messages').where({ channel_id: channelId }).count<{ c: string }>('* as c').first())?.c);

const MESSAGE_KEYS = [
  'id', 'channel_id', 'author_id', 'content', 'content_json', 'metadata', 'thread_id', 'thread', 'reactions',
  'card_origin', 'mentioned_user_ids', 'created_at', 'edited_at', 'display', 'webhook_id',
];

/** A webhook-style post (no author, display overrides), through the service as the hook routes post it. */
const postAsHook = (workspaceId: string, channelId: string) =>
  post(stack().rt, {
    workspaceId,
    channelId,
    authorId: null,
    content: 'from a hook',
    display: { username: 'CI', icon_url: 'https://example.com/i.png' },
    webhookId: '3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b',
  });

async function setup() {
  const ws = await newWorkspace();
  const channel = await createChannel(ws.owner);
  return { ws, channel };
}

describe('POST /channels/:id/messages', () => {
  it('answers 201 with the full Message object and emits message.created with it', async () => {
    const { ws, channel } = await setup();
    const res = await ws.owner.post(messagesUrl(channel.id), { content: 'hello', metadata: { type: 'deploy.finished', data: { ok: true } } });
    const m = expectOk(res, 201).data;
    expect(m).to.have.all.keys(...MESSAGE_KEYS);
    expect(m).to.deep.include({
      channel_id: channel.id,
      author_id: ws.ownerId,
      content: 'hello',
      content_json: null,
      metadata: { type: 'deploy.finished', data: { ok: true } },
      thread_id: null,
      thread: null,
      reactions: [],
      card_origin: null,
      mentioned_user_ids: [],
      edited_at: null,
      display: null,
      webhook_id: null,
    });
    const [e] = await waitForEvents((x) => x.type === 'message.created' && x.data.message.id === m.id);
    expect(e!.to).to.deep.equal({ scope: 'channel', workspace_id: ws.workspaceId, channel_id: channel.id });
    expect(e!.data.message).to.deep.equal(m);
    // What GET returns is what POST returned.
    expect(expectOk(await ws.owner.get(`${messagesUrl(channel.id)}/${m.id}`)).data).to.deep.equal(JSON.parse(JSON.stringify(m)));
  });

  it('answers 403 forbidden to a workspace member who has not joined a public channel, telling them to join', async () => {
    const { ws, channel } = await setup();
    const u = await ws.user();
    const res = await u.client.post(messagesUrl(channel.id), { content: 'hi' });
    expectError(res, 403, 'forbidden');
    expect(res.body.error.message).to.match(/join/);
    expect(await countMessages(channel.id)).to.equal(0);
    expectOk(await u.client.post(`/api/v1/channels/${channel.id}/members`, { user_id: u.id }), 201);
    await postMessage(u.client, channel.id, 'now I can');
  });

  it('requires content: missing, empty, only white space or not a string is 400 validation_error naming content', async () => {
    const { ws, channel } = await setup();
    for (const body of [{}, { content: '' }, { content: ' \n\t ' }, { content: 5 }, { content: null }]) {
      const res = await ws.owner.post(messagesUrl(channel.id), body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message).to.match(/^content/);
    }
    expect(await countMessages(channel.id)).to.equal(0);
  });

  it('accepts 40,000 characters (code points) and refuses 40,001', async () => {
    const { ws, channel } = await setup();
    await postMessage(ws.owner, channel.id, 'a'.repeat(40_000));
    await postMessage(ws.owner, channel.id, '😀'.repeat(40_000));
    const res = await ws.owner.post(messagesUrl(channel.id), { content: 'a'.repeat(40_001) });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/content.*40000/);
    expect(await countMessages(channel.id)).to.equal(2);
  });

  it('checks metadata: {type 1-100 chars, data object}, at most 16 KB', async () => {
    const { ws, channel } = await setup();
    const bad = [
      'x',
      [],
      { type: 'a' },
      { data: {} },
      { type: '', data: {} },
      { type: 'a'.repeat(101), data: {} },
      { type: 'a', data: [] },
      { type: 'a', data: 'x' },
      { type: 'a', data: {}, extra: 1 },
      { type: 'a', data: { blob: 'x'.repeat(16_384) } },
    ];
    for (const metadata of bad) {
      const res = await ws.owner.post(messagesUrl(channel.id), { content: 'x', metadata });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message, JSON.stringify(metadata)).to.match(/^metadata/);
    }
    expect(await countMessages(channel.id)).to.equal(0);
    const ok = await postMessage(ws.owner, channel.id, { content: 'x', metadata: { type: 'a'.repeat(100), data: { blob: 'x'.repeat(16_000) } } });
    expect(ok.metadata.type).to.have.length(100);
  });

  it('rejects unknown body fields', async () => {
    const { ws, channel } = await setup();
    expectError(await ws.owner.post(messagesUrl(channel.id), { content: 'x', author_id: ws.ownerId }), 400, 'validation_error');
  });

  it('answers 400 validation_error for malformed JSON', async () => {
    const { ws, channel } = await setup();
    const res = await ws.owner.post(messagesUrl(channel.id), '{"content": ', { 'content-type': 'application/json' });
    expectError(res, 400, 'validation_error');
  });
});

describe('content_json (rich text and blocks)', () => {
  const doc = (...content: unknown[]) => ({ type: 'doc', content });
  const button = (b: Record<string, unknown>) => ({
    type: 'block_button_group',
    attrs: { blockName: 'button_group', version: 1, props: { buttons: [b] } },
  });

  it('stores a valid document with its card_origin and mentioned_user_ids', async () => {
    const { ws, channel } = await setup();
    const u = await ws.user();
    const content_json = doc(
      { type: 'paragraph', content: [{ type: 'text', text: 'hi ' }, { type: 'mention', attrs: { id: u.id } }] },
      { type: 'block_repo_pr_card', attrs: { blockName: 'repo_pr_card', version: 1, props: { url: 'https://github.com/a/b/pull/1' } } },
    );
    const m = await postMessage(ws.owner, channel.id, { content: 'hi', content_json });
    expect(m.content_json).to.deep.equal(content_json);
    expect(m.card_origin).to.equal('https://github.com');
    expect(m.mentioned_user_ids).to.deep.equal([u.id]);
    const stored = expectOk(await ws.owner.get(`${messagesUrl(channel.id)}/${m.id}`)).data;
    expect(stored.card_origin).to.equal('https://github.com');
    expect(stored.mentioned_user_ids).to.deep.equal([u.id]);
  });

  it('rejects invalid documents with 400 validation_error whose message names the node path under content_json', async () => {
    const { ws, channel } = await setup();
    const cases: [unknown, RegExp][] = [
      [doc(button({ label: 'x', url: 'http://a.b' })), /^content_json\.content\.0\.attrs\.props\.buttons\.0\.url/],
      [doc(button({ label: 'x' })), /^content_json\.content\.0\.attrs\.props\.buttons\.0/],
      [doc(button({ label: 'x', url: 'https://a.b', actionId: 'y' })), /^content_json\.content\.0\.attrs\.props\.buttons\.0/],
      [doc(button({ label: 'x'.repeat(101), url: 'https://a.b' })), /^content_json\.content\.0\.attrs\.props\.buttons\.0\.label/],
      [doc({ type: 'block_nope', attrs: { blockName: 'nope', version: 1, props: {} } }), /^content_json\.content\.0/],
      [
        doc({ type: 'block_tracker_issue_card', attrs: { blockName: 'tracker_issue_card', version: 1, props: { url: 'https://evil.example/x' } } }),
        /^content_json\.content\.0\.attrs\.props\.url/,
      ],
      [{ type: 'nope' }, /^content_json/],
      ['text', /^content_json/],
    ];
    for (const [content_json, path] of cases) {
      const res = await ws.owner.post(messagesUrl(channel.id), { content: 'x', content_json });
      expectError(res, 400, 'validation_error');
      expect(res.body.error.message, JSON.stringify(content_json)).to.match(path);
    }
    expect(await countMessages(channel.id)).to.equal(0);
  });

  it('uses the configured tracker and code hosts', async () => {
    const { ws, channel } = await setup();
    const card = (host: string) =>
      doc({ type: 'block_tracker_issue_card', attrs: { blockName: 'tracker_issue_card', version: 1, props: { url: `https://${host}/t/1` } } });
    const m = await postMessage(ws.owner, channel.id, { content: 'x', content_json: card(stack().rt.config.trackerHosts[0]!) });
    expect(m.card_origin).to.equal(`https://${stack().rt.config.trackerHosts[0]}`);
    expectError(await ws.owner.post(messagesUrl(channel.id), { content: 'x', content_json: card('github.com') }), 400, 'validation_error');
  });
});

describe('GET /channels/:id/messages/:message_id', () => {
  it('answers 404 not_found for a message of another channel or a malformed id', async () => {
    const { ws, channel } = await setup();
    const other = await createChannel(ws.owner);
    const m = await postMessage(ws.owner, other.id, 'elsewhere');
    const a = await ws.owner.get(`${messagesUrl(channel.id)}/${m.id}`);
    expectError(a, 404, 'not_found');
    expect(a.body.error.message).to.match(/Message/);
    expectError(await ws.owner.get(`${messagesUrl(channel.id)}/xyz`), 404, 'not_found');
  });

  it('lets a workspace member who has not joined read a public channel', async () => {
    const { ws, channel } = await setup();
    const u = await ws.user();
    const m = await postMessage(ws.owner, channel.id, 'public');
    expect(expectOk(await u.client.get(`${messagesUrl(channel.id)}/${m.id}`)).data.content).to.equal('public');
    expect(expectOk(await u.client.get(messagesUrl(channel.id))).data).to.have.length(1);
  });
});

describe('PATCH /channels/:id/messages/:message_id', () => {
  it('lets the author edit content, content_json and metadata, sets edited_at and emits message.updated', async () => {
    const { ws, channel } = await setup();
    const m = await postMessage(ws.owner, channel.id, { content: 'v1', metadata: { type: 't', data: {} } });
    const content_json = {
      type: 'doc',
      content: [{ type: 'block_repo_pr_card', attrs: { blockName: 'repo_pr_card', version: 1, props: { url: 'https://github.com/a/b/pull/2' } } }],
    };
    const edited = expectOk(await ws.owner.patch(`${messagesUrl(channel.id)}/${m.id}`, { content: 'v2', content_json, metadata: null })).data;
    expect(edited).to.deep.include({ id: m.id, content: 'v2', content_json, metadata: null, card_origin: 'https://github.com' });
    expect(edited.edited_at).to.be.a('string');
    expect(edited.created_at).to.equal(m.created_at);
    const [e] = await waitForEvents((x) => x.type === 'message.updated' && x.data.message.id === m.id);
    expect(e!.data.message).to.deep.equal(edited);
    const cleared = expectOk(await ws.owner.patch(`${messagesUrl(channel.id)}/${m.id}`, { content_json: null })).data;
    expect(cleared).to.deep.include({ content: 'v2', content_json: null, card_origin: null });
  });

  it('answers 403 forbidden to anyone but the author (admins and owners included), changing nothing', async () => {
    const { ws, channel } = await setup();
    const u = await ws.user();
    expectOk(await u.client.post(`/api/v1/channels/${channel.id}/members`, { user_id: u.id }), 201);
    const m = await postMessage(u.client, channel.id, 'mine');
    expectError(await ws.owner.patch(`${messagesUrl(channel.id)}/${m.id}`, { content: 'theirs' }), 403, 'forbidden');
    const after = expectOk(await u.client.get(`${messagesUrl(channel.id)}/${m.id}`)).data;
    expect(after).to.deep.include({ content: 'mine', edited_at: null });
  });

  it('validates edits like posts', async () => {
    const { ws, channel } = await setup();
    const m = await postMessage(ws.owner, channel.id, 'x');
    expectError(await ws.owner.patch(`${messagesUrl(channel.id)}/${m.id}`, { content: '  ' }), 400, 'validation_error');
    const res = await ws.owner.patch(`${messagesUrl(channel.id)}/${m.id}`, { content_json: { type: 'doc', content: [{ type: 'bogus' }] } });
    expectError(res, 400, 'validation_error');
    expect(res.body.error.message).to.match(/^content_json\.content\.0/);
    expectError(await ws.owner.patch(`${messagesUrl(channel.id)}/${m.id}`, { thread_id: m.id }), 400, 'validation_error');
    expect(expectOk(await ws.owner.get(`${messagesUrl(channel.id)}/${m.id}`)).data.edited_at).to.equal(null);
  });
});

describe('DELETE /channels/:id/messages/:message_id', () => {
  it('lets the author delete (204) and emits message.deleted', async () => {
    const { ws, channel } = await setup();
    const m = await postMessage(ws.owner, channel.id, 'bye');
    expectOk(await ws.owner.delete(`${messagesUrl(channel.id)}/${m.id}`), 204);
    expectError(await ws.owner.get(`${messagesUrl(channel.id)}/${m.id}`), 404, 'not_found');
    const [e] = await waitForEvents((x) => x.type === 'message.deleted' && x.data.message_id === m.id);
    expect(e!.data).to.deep.equal({ message_id: m.id, channel_id: channel.id, thread_id: null });
  });

  it('lets an admin and the owner delete others\' messages; a plain member gets 403 forbidden', async () => {
    const { ws, channel } = await setup();
    const a = await ws.user();
    const b = await ws.user();
    const admin = await ws.user({ role: 'admin' });
    for (const u of [a, b]) expectOk(await u.client.post(`/api/v1/channels/${channel.id}/members`, { user_id: u.id }), 201);
    const m1 = await postMessage(a.client, channel.id, 'one');
    const m2 = await postMessage(a.client, channel.id, 'two');
    expectError(await b.client.delete(`${messagesUrl(channel.id)}/${m1.id}`), 403, 'forbidden');
    expect(await countMessages(channel.id)).to.equal(2);
    expectOk(await admin.client.delete(`${messagesUrl(channel.id)}/${m1.id}`), 204);
    expectOk(await ws.owner.delete(`${messagesUrl(channel.id)}/${m2.id}`), 204);
    expect(await countMessages(channel.id)).to.equal(0);
  });
});

describe('postMessage (the service function incoming webhooks call)', () => {
  it('posts for an already-authorised author with display overrides and webhook_id, applying the content rules', async () => {
    const { ws, channel } = await setup();
    const webhookId = '3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b';
    const m = await post(stack().rt, {
      workspaceId: ws.workspaceId,
      channelId: channel.id,
      authorId: null,
      content: 'deploy <b onclick="x()">done</b>',
      metadata: { type: 'ci.deploy', data: { sha: 'abc' } },
      display: { username: 'CI', icon_emoji: ':rocket:' },
      webhookId,
    });
    expect(m).to.deep.include({ author_id: null, content: 'deploy <b>done</b>', display: { username: 'CI', icon_emoji: ':rocket:' }, webhook_id: webhookId });
    expect(expectOk(await ws.owner.get(`${messagesUrl(channel.id)}/${m.id}`)).data).to.deep.equal(JSON.parse(JSON.stringify(m)));
    await waitForEvents((e) => e.type === 'message.created' && e.data.message.id === m.id);
    let error: unknown;
    try {
      await post(stack().rt, { workspaceId: ws.workspaceId, channelId: channel.id, authorId: ws.ownerId, content: '   ' });
    } catch (err) {
      error = err;
    }
    expect(error).to.include({ code: 'validation_error' });
  });
});

describe('one Message object, however it is read', () => {
  // History pages are rendered by Postgres, single messages and events by
  // rt.presenters.message: the two must give the same object for every field.
  it('lists each message exactly as GET /messages/{id} and the POST answer give it', async () => {
    const { ws, channel } = await setup();
    const u = await ws.user();
    const content_json = {
      type: 'doc',
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'hi ' }, { type: 'mention', attrs: { id: u.id } }] }],
    };
    const root = await postMessage(ws.owner, channel.id, { content: 'root', content_json, metadata: { type: 'ci.run', data: { n: 1.5, ok: true, s: 'é' } } });
    await postMessage(ws.owner, channel.id, { content: 'reply', thread_id: root.id });
    expectOk(await ws.owner.post(`${messagesUrl(channel.id)}/${root.id}/reactions`, { emoji: 'tada' }), 201);
    expectOk(await ws.owner.patch(`${messagesUrl(channel.id)}/${root.id}`, { content: 'root, edited' }));
    const hooked = await postAsHook(ws.workspaceId, channel.id);
    const plain = await postMessage(ws.owner, channel.id, { content: 'plain' });

    const listed = expectOk(await ws.owner.get(messagesUrl(channel.id))).data as { id: string }[];
    expect(listed.map((m) => m.id)).to.deep.equal([plain.id, hooked.id, root.id]);
    for (const item of listed) {
      const single = expectOk(await ws.owner.get(`${messagesUrl(channel.id)}/${item.id}`)).data;
      expect(item).to.deep.equal(single);
    }
    expect(listed[0]).to.deep.equal(JSON.parse(JSON.stringify(plain)));
    expect(listed[1]).to.deep.equal(JSON.parse(JSON.stringify(hooked)));
    const [rootListed] = listed.slice(2) as Record<string, unknown>[];
    expect(rootListed).to.deep.include({ content: 'root, edited', mentioned_user_ids: [u.id] });
    expect(rootListed!.thread).to.have.property('reply_count', 1);
    expect(rootListed!.reactions).to.deep.equal([{ emoji: 'tada', count: 1, user_ids: [ws.ownerId] }]);
    expect(rootListed!.edited_at).to.be.a('string');
    const replies = expectOk(await ws.owner.get(`${messagesUrl(channel.id)}?thread_id=${root.id}`)).data as { id: string }[];
    expect(replies).to.have.lengthOf(1);
    expect(replies[0]).to.deep.equal(expectOk(await ws.owner.get(`${messagesUrl(channel.id)}/${replies[0]!.id}`)).data);
  });
});

describe('one rendering of a Message', () => {
  // A page's JSON text, from `{"data":[...],"pagination":...}`, and a single object's from `{"data":{...}}`.
  const pageData = (text: string) => text.slice('{"data":'.length, text.lastIndexOf(',"pagination":'));
  const single = (text: string) => text.slice('{"data":'.length, -1);

  it('gives every message in a history page byte for byte as GET and POST give it, for every kind of field', async () => {
    const { ws, channel } = await setup();
    const u = await ws.user();
    const raw = (path: string) => fetch(`${stack().url}${path}`, { headers: { authorization: `Bearer ${ws.ownerKey}` } }).then((r) => r.text());
    const postRaw = async (body: Record<string, unknown>) => {
      const res = await fetch(`${stack().url}${messagesUrl(channel.id)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ws.ownerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).to.equal(201);
      return single(await res.text());
    };
    // Keys out of order, numbers jsonb would rewrite (1e21, 5e-7, 1.5), unicode and line separators.
    const metadata = { type: 'ci.run', data: { z: 1, a: { y: 1e21, b: 5e-7, n: 1.5, neg: -0.25 }, s: 'é \u2028 😀 "q"', list: [3, 1, 2], nil: null } };
    const content_json = {
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: 'hi ' }, { type: 'mention', attrs: { id: u.id } }] },
        { type: 'block_repo_pr_card', attrs: { blockName: 'repo_pr_card', version: 1, props: { url: 'https://github.com/acme/app/pull/1', title: 'Fix', state: 'open' } } },
      ],
    };
    const posted = new Map<string, string>();
    const rich = await postRaw({ content: 'rich', content_json, metadata });
    const richId = JSON.parse(rich).id as string;
    posted.set(richId, rich);
    const reply = await postRaw({ content: 'a reply', thread_id: richId, metadata: { type: 't', data: { b: 2, a: 1 } } });
    posted.set(JSON.parse(reply).id, reply);
    for (const emoji of ['tada', 'eyes']) expectOk(await ws.owner.post(`${messagesUrl(channel.id)}/${richId}/reactions`, { emoji }), 201);
    expectOk(await ws.owner.post(`/api/v1/channels/${channel.id}/members`, { user_id: u.id }), 201);
    expectOk(await u.client.post(`${messagesUrl(channel.id)}/${richId}/reactions`, { emoji: 'tada' }), 201);
    const edited = await postRaw({ content: 'before' });
    const editedId = JSON.parse(edited).id as string;
    expectOk(await ws.owner.patch(`${messagesUrl(channel.id)}/${editedId}`, { content: 'after', metadata: { type: 'e', data: { x: 0.1 } } }));
    const hooked = await postAsHook(ws.workspaceId, channel.id);
    posted.set(hooked.id, JSON.stringify(hooked));
    const plain = await postRaw({ content: 'plain' });
    posted.set(JSON.parse(plain).id, plain);

    for (const [id, text] of posted) {
      if (id !== richId) expect(single(await raw(`${messagesUrl(channel.id)}/${id}`))).to.equal(text);
    }
    // The relay renders message.created from the row (messages.store.ts
    // messageCreatedEvents): the stream holds the POST answer byte for byte,
    // as posted (the reply, reactions and edits that came after are events of their own).
    await stack().relay?.drain();
    const entries = await stack().rt.redis.xrange(stack().rt.bus.shards[0]!.events, '-', '+');
    const created = new Map<string, string>();
    for (const [, fields] of entries) {
      const e = fields[fields.indexOf('e') + 1]!;
      const m = /^\{"type":"message\.created","to":\{"scope":"channel","workspace_id":"([^"]+)","channel_id":"([^"]+)"\},"data":\{"message":([\s\S]*)\}\}$/.exec(e);
      if (m && m[2] === channel.id) created.set(JSON.parse(m[3]!).id, m[3]!);
    }
    for (const [id, text] of posted) expect(created.get(id), `the message.created entry of ${id}`).to.equal(text);
    for (const path of [messagesUrl(channel.id), `${messagesUrl(channel.id)}?thread_id=${richId}`]) {
      const page = pageData(await raw(path));
      const ids = (JSON.parse(page) as { id: string }[]).map((m) => m.id);
      const singles = await Promise.all(ids.map(async (id) => single(await raw(`${messagesUrl(channel.id)}/${id}`))));
      expect(page).to.equal(`[${singles.join(',')}]`);
    }
    const richListed = JSON.parse(single(await raw(`${messagesUrl(channel.id)}/${richId}`)));
    expect(richListed.metadata).to.deep.equal(metadata);
    expect(single(await raw(`${messagesUrl(channel.id)}/${richId}`))).to.include('"y":1e+21');
    expect(richListed.card_origin).to.equal('https://github.com');
    expect(richListed.thread.reply_count).to.equal(1);
    expect(richListed.reactions).to.deep.equal([
      { emoji: 'tada', count: 2, user_ids: [ws.ownerId, u.id] },
      { emoji: 'eyes', count: 1, user_ids: [ws.ownerId] },
    ]);
  });
});

describe('the usual message, written as literals', () => {
  // messages.store.ts writes a message whose fields all hold their usual
  // value (no blocks, thread, reaction, edit, ...) with those values as
  // literals. A message departing from the usual in any one field must be
  // written as if there were no such branch: every field's own expression.
  const ALWAYS_WRITTEN = ['id', 'channel_id', 'author_id', 'content', 'thread_id', 'created_at'] as const satisfies readonly MessageField[];
  // One departure per field, made as a client or the server would make it where it can be.
  type Departure = (m: { id: string; channelId: string; owner: Client }) => Promise<unknown>;
  const column =
    (set: string): Departure =>
    ({ id }) =>
      stack().rt.db.raw(`UPDATE messages SET ${set} WHERE id = ?`, [id]);
  const DEPARTURES: Record<Exclude<MessageField, (typeof ALWAYS_WRITTEN)[number]>, Departure> = {
    content_json: column(`content_json = '{"type":"doc","content":[]}'`),
    metadata: column(`metadata = '{"type":"x","data":{"a":1}}'`),
    thread: async ({ id, channelId, owner }) => expectOk(await owner.post(messagesUrl(channelId), { content: 'reply', thread_id: id }), 201),
    reactions: async ({ id, channelId, owner }) => expectOk(await owner.post(`${messagesUrl(channelId)}/${id}/reactions`, { emoji: 'tada' }), 201),
    card_origin: column(`card_origin = 'https://github.com'`),
    mentioned_user_ids: column(`mentioned_user_ids = ARRAY[author_id]`),
    mentioned_group_ids: column(`mentioned_group_ids = '{here}'`),
    display: column(`display = '{"username":"CI"}'`),
    webhook_id: column(`webhook_id = '3f1d2c4b-5a6e-4f70-8a9b-0c1d2e3f4a5b'`),
    edited_at: column(`edited_at = now()`),
    streaming: column(`streaming = true`),
    pinned_at: column(`pinned_at = now()`),
    pinned_by: column(`pinned_by = author_id`),
    unfurls: column(`unfurls = '[{"url":"https://example.com"}]'`),
  };

  it('has a departure for every field that is not always written', () => {
    expect([...ALWAYS_WRITTEN, ...Object.keys(DEPARTURES)].sort()).to.deep.equal([...MESSAGE_FIELDS].sort());
  });

  for (const level of [2, 3] as const) {
    it(`writes a message departing from the usual in any one field as every field's own expression does (level ${level})`, async () => {
      const { ws, channel } = await setup();
      const m = { channelId: channel.id, owner: ws.owner };
      const plainId = (await postMessage(ws.owner, channel.id, 'plain')).id;
      const departed = new Map<MessageField, string>();
      for (const [field, depart] of Object.entries(DEPARTURES) as [MessageField, Departure][]) {
        const id = (await postMessage(ws.owner, channel.id, `departs in ${field}`)).id;
        await depart({ ...m, id });
        departed.set(field, id);
      }
      const ids = [plainId, ...departed.values()];
      const { rows } = await stack().rt.db.raw<{ rows: { id: string; written: string; every: string }[] }>(
        `SELECT m.id, ${messageSqlAt(level).json} AS written, ${everyFieldJson(level)} AS every FROM messages m WHERE m.id = ANY(?)`,
        [ids],
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      const plain = byId.get(plainId)!;
      expect(plain.written).to.equal(plain.every);
      for (const [field, id] of departed) {
        const row = byId.get(id)!;
        expect(row.written, `a message departing in ${field}`).to.equal(row.every);
        // The departure shows where the field is written at this level: the test would see a wrong branch.
        if (messageFieldsAt(level).includes(field)) expect(JSON.parse(row.every)[field], field).not.to.deep.equal(JSON.parse(plain.every)[field]);
      }
    });
  }
});

describe('posting cost', () => {
  it('takes ONE statement (the message, which is its own event) for a top-level post once the key and the access are cached', async () => {
    const { ws, channel } = await setup();
    await postMessage(ws.owner, channel.id, 'warm up');
    await stack().relay?.drain();
    const seen = await driverQueries(() => postMessage(ws.owner, channel.id, 'counted'));
    expect(seen, seen.join('\n')).to.have.length(1);
    expect(seen[0]).to.match(/INSERT INTO messages[\s\S]*event_xid[\s\S]*pg_current_xact_id\(\)/);
    expect(seen[0]).not.to.match(/outbox/);
  });
});
