// Streamed agent replies (level 3, contract §9): `"streaming": true` on a post,
// .../append by its author (message.appended), .../finish (message.updated
// with streaming false), 409 after finish, and the worker's sweep.
import { expect } from 'chai';
import { expectError, expectOk } from '../support/expect.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, testEnv, uniqueName, type TestWorkspace } from '../support/stack.js';
import { serverLevels } from '../support/client.js';
import { createLogger } from '../../shared/logger.js';
import { startStack, type Stack } from '../../services/stack.js';

describe('streamed agent replies (level 3)', () => {
  const open: RawStream[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  let s: Stack;
  let ws: TestWorkspace;
  beforeEach(async () => {
    s = await level3Stack();
    ws = await newWorkspace(s);
  });
  const newChannel = async (isPrivate = false) =>
    expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c'), is_private: isPrivate }), 201).data.id as string;

  it('grows a reply in place: appends by its author reach a second client in order, finish ends it with message.updated', async () => {
    const bot = await ws.user({ is_agent: true });
    const reader = await ws.user();
    const channelId = await newChannel();
    for (const u of [bot, reader]) expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: u.id }), 201);
    const base = `/api/v1/channels/${channelId}/messages`;
    const watcher = await openRaw(s.url, reader.key);
    open.push(watcher);

    const created = expectOk(await bot.client.post(base, { content: 'Thinking', streaming: true }), 201).data;
    expect(created.streaming).to.equal(true);
    expect((await watcher.waitFor((f) => f.event === 'message.created' && f.data.message.id === created.id)).data.message.streaming).to.equal(true);
    const deltas = [' about', ' it:', ' **42**', ' (see [docs](https://example.com))', '.'];
    for (const delta of deltas) {
      const answer = expectOk(await bot.client.post(`${base}/${created.id}/append`, { content: delta })).data;
      expect(answer.streaming).to.equal(true);
    }
    const appended = await watcher.waitForCount((f) => f.event === 'message.appended' && f.data.message_id === created.id, deltas.length);
    expect(appended.map((f) => f.data)).to.deep.equal(
      deltas.map((content_delta) => ({ type: 'message.appended', message_id: created.id, channel_id: channelId, content_delta })),
    );
    const full = `Thinking${deltas.join('')}`;
    const during = expectOk(await reader.client.get(`${base}/${created.id}`)).data;
    expect(during).to.include({ content: full, streaming: true, edited_at: null });

    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: full }] }] };
    const finished = expectOk(await bot.client.post(`${base}/${created.id}/finish`, { content_json: doc, metadata: { type: 'agent.reply', data: { tokens: 12 } } })).data;
    expect(finished).to.include({ content: full, streaming: false, edited_at: null });
    expect(finished.content_json).to.deep.equal(doc);
    const updated = await watcher.waitFor((f) => f.event === 'message.updated' && f.data.message.id === created.id);
    expect(updated.data.message).to.deep.equal(finished);
    // In commit order: created, every append, then the update.
    const order = watcher.frames.filter((f) => (f.data?.message?.id ?? f.data?.message_id) === created.id).map((f) => f.event);
    expect(order).to.deep.equal(['message.created', ...deltas.map(() => 'message.appended'), 'message.updated']);
    expect(expectOk(await reader.client.get(`${base}/${created.id}`)).data).to.deep.equal(finished);
  });

  it('lets only the author append or finish (403), hides it from outsiders (404), and answers 409 conflict once finished or never streaming', async () => {
    const member = await ws.user();
    const outsider = await ws.user();
    const channelId = await newChannel(true);
    expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: member.id }), 201);
    const base = `/api/v1/channels/${channelId}/messages`;
    const m = expectOk(await ws.owner.post(base, { content: 'partial', streaming: true }), 201).data;
    expectError(await member.client.post(`${base}/${m.id}/append`, { content: 'x' }), 403, 'forbidden');
    expectError(await member.client.post(`${base}/${m.id}/finish`, {}), 403, 'forbidden');
    expectError(await outsider.client.post(`${base}/${m.id}/append`, { content: 'x' }), 404, 'not_found');
    expectError(await ws.owner.post(`${base}/00000000-0000-4000-8000-000000000000/append`, { content: 'x' }), 404, 'not_found');
    expectError(await ws.owner.post(`${base}/${m.id}/append`, { content: '' }), 400, 'validation_error');
    expectError(await ws.owner.post(`${base}/${m.id}/append`, { content: 'x'.repeat(40_000) }), 400, 'validation_error');
    expect(expectOk(await ws.owner.get(`${base}/${m.id}`)).data.content).to.equal('partial');

    expectOk(await ws.owner.post(`${base}/${m.id}/finish`, {}));
    expectError(await ws.owner.post(`${base}/${m.id}/append`, { content: 'late' }), 409, 'conflict');
    expectError(await ws.owner.post(`${base}/${m.id}/finish`, {}), 409, 'conflict');
    const plain = expectOk(await ws.owner.post(base, { content: 'plain' }), 201).data;
    expect(plain.streaming).to.equal(false);
    expectError(await ws.owner.post(`${base}/${plain.id}/append`, { content: 'x' }), 409, 'conflict');
    expect(expectOk(await ws.owner.get(`${base}/${m.id}`)).data.content).to.equal('partial');
  });

  it('needs write access now: an author who left answers 403 in a public channel and 404 in a private one, on append and finish; back in, it appends again', async () => {
    const bot = await ws.user({ is_agent: true });
    for (const isPrivate of [false, true]) {
      const channelId = await newChannel(isPrivate);
      expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: bot.id }), 201);
      const base = `/api/v1/channels/${channelId}/messages`;
      const m = expectOk(await bot.client.post(base, { content: 'partial', streaming: true }), 201).data;
      expectOk(await bot.client.delete(`/api/v1/channels/${channelId}/members/${bot.id}`), 204);
      const [status, code] = isPrivate ? [404, 'not_found'] : [403, 'forbidden'];
      expectError(await bot.client.post(`${base}/${m.id}/append`, { content: ' more' }), status, code);
      expectError(await bot.client.post(`${base}/${m.id}/finish`, {}), status, code);
      expect(expectOk(await ws.owner.get(`${base}/${m.id}`)).data).to.include({ content: 'partial', streaming: true });
      expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: bot.id }), 201);
      expect(expectOk(await bot.client.post(`${base}/${m.id}/append`, { content: ' more' })).data.content).to.equal('partial more');
      expect(expectOk(await bot.client.post(`${base}/${m.id}/finish`, {})).data.streaming).to.equal(false);
    }
  });

  it('works in DMs, and sanitizes the whole content on each append (an unsafe link completed by a delta is rewritten)', async () => {
    const other = await ws.user();
    const dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [other.id] }), 201).data;
    const base = `/api/v1/dms/${dm.id}/messages`;
    const m = expectOk(await ws.owner.post(base, { content: 'see [here](java', streaming: true }), 201).data;
    const watcher = await openRaw(s.url, other.key);
    open.push(watcher);
    const after = expectOk(await ws.owner.post(`${base}/${m.id}/append`, { content: 'script:alert(1))' })).data;
    expect(after.content).to.equal('see [here](#)');
    // What was already sent changed: the whole message, not a delta.
    const frame = await watcher.waitFor((f) => f.event === 'message.updated' && f.data.message.id === m.id);
    expect(frame.data.message.content).to.equal('see [here](#)');
  });

  it('renders streaming in history pages byte for byte as GET gives it, and a level-2 stack knows nothing of it', async () => {
    const channelId = await newChannel();
    const base = `/api/v1/channels/${channelId}/messages`;
    const a = expectOk(await ws.owner.post(base, { content: 'streaming', streaming: true }), 201).data;
    const b = expectOk(await ws.owner.post(base, { content: 'plain' }), 201).data;
    const raw = (path: string) => fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${ws.ownerKey}` } }).then((r) => r.text());
    const page = await raw(base);
    const singles = await Promise.all([b.id, a.id].map(async (id) => (await raw(`${base}/${id}`)).slice('{"data":'.length, -1)));
    expect(page.slice('{"data":'.length, page.lastIndexOf(',"pagination":'))).to.equal(`[${singles.join(',')}]`);
    expect(singles[1]).to.match(/,"streaming":true\}$/);

    const ws2 = await newWorkspace(stack());
    const c2 = expectOk(await ws2.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    expectError(await ws2.owner.post(`/api/v1/channels/${c2}/messages`, { content: 'x', streaming: true }), 400, 'validation_error');
    const posted = expectOk(await ws2.owner.post(`/api/v1/channels/${c2}/messages`, { content: 'x' }), 201).data;
    expect(posted).not.to.have.property('streaming');
    expectError(await ws2.owner.post(`/api/v1/channels/${c2}/messages/${posted.id}/append`, { content: 'x' }), 404, 'not_found');
  });
});

describe('the streaming sweep (level 3, a repeating worker job)', () => {
  let s: Stack;
  let cleanup: () => Promise<void>;
  before(async () => {
    const env = testEnv({ FEATURE_LEVEL: '3', STREAMING_TIMEOUT: '1' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
    serverLevels.set(s.url, '3');
    cleanup = async () => {
      serverLevels.delete(s.url);
      await s.close();
      await env.cleanup();
    };
  });
  after(() => cleanup?.());

  it('finishes a reply left without an append for STREAMING_TIMEOUT, with message.updated, and leaves finished ones alone', async () => {
    const ws = await newWorkspace(s);
    const channelId = expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('c') }), 201).data.id;
    const base = `/api/v1/channels/${channelId}/messages`;
    const watcher = await openRaw(s.url, ws.ownerKey);
    try {
      const m = expectOk(await ws.owner.post(base, { content: 'left alone', streaming: true }), 201).data;
      const frame = await watcher.waitFor((f) => f.event === 'message.updated' && f.data.message.id === m.id, 15_000);
      expect(frame.data.message).to.include({ content: 'left alone', streaming: false });
      expectError(await ws.owner.post(`${base}/${m.id}/append`, { content: 'too late' }), 409, 'conflict');
      expect(watcher.events('message.updated')).to.have.length(1);
    } finally {
      watcher.close();
    }
  });
});
