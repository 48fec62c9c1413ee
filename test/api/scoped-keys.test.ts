// Scoped keys (contract §15, level 3; docs/security.md, "Scopes"): a key's
// `scopes` limit what it does (403 insufficient_scope naming the scope
// needed), its `conversation_ids` what it reaches (everything else is absent:
// lists, search, direct calls, the stream and its replay, event
// subscriptions, other people's files), never beyond its user's role; keys
// made from a key only narrow. Level 2 is unchanged.
import { expect } from 'chai';
import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import type { Stack } from '../../services/stack.js';
import { apiRoutes } from '../../services/api/routes.js';
import { buildOpenApi } from '../../services/api/openapi.js';
import { DELIVERY_QUEUE } from '../../services/worker/event-deliveries.js';
import { queuePrefix } from '../../shared/jobs.js';
import { SCOPES, type Scope } from '../../shared/scopes.js';
import { Client, serverLevels } from '../support/client.js';
import { expectError, expectOk } from '../support/expect.js';
import { uploadFile, waitFor } from '../support/files.js';
import { FAST_DELIVERY, startReceiver, type Receiver } from '../support/receiver.js';
import { separateStack } from '../support/separate-stack.js';
import { openRaw, type Frame, type RawStream } from '../support/sse.js';
import { newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';

describe('scoped keys (level 3)', function () {
  this.timeout(60_000);
  let s: Stack;
  let stop: () => Promise<void>;
  const receivers: Receiver[] = [];
  const streams: RawStream[] = [];
  const track = (stream: RawStream) => (streams.push(stream), stream);

  before(async () => {
    // Level 3 with event deliveries to loopback receivers (docs/bots.md, "Testing").
    const started = await separateStack(FAST_DELIVERY);
    s = started.stack;
    stop = started.stop;
    serverLevels.set(s.url, '3');
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    serverLevels.delete(s.url);
    await stop();
  });

  /** A key made with `by`'s key (POST /api-keys), and a client for it. */
  async function keyOf(by: Client, body: { scopes?: Scope[]; conversation_ids?: string[] } = {}) {
    const made = expectOk(await by.post('/api/v1/api-keys', { name: uniqueName('k'), ...body }), 201).data;
    return { ...made, client: new Client(s.url, made.key) };
  }
  const channel = async (ws: TestWorkspace, o: { is_private?: boolean } = {}) =>
    expectOk(await ws.owner.post('/api/v1/channels', { name: uniqueName('ch').slice(0, 60), is_private: o.is_private ?? false }), 201).data;
  const post = async (client: Client, channelId: string, content: string) =>
    expectOk(await client.post(`/api/v1/channels/${channelId}/messages`, { content }), 201).data;

  it('a read key reads but cannot post: 403 insufficient_scope naming messages:write', async () => {
    const ws = await newWorkspace(s);
    const general = await channel(ws);
    const reader = await keyOf(ws.owner, { scopes: ['read'] });
    expect(reader).to.include({ conversation_ids: null }).and.to.have.deep.property('scopes', ['read']);
    expectOk(await reader.client.get(`/api/v1/channels/${general.id}/messages`));
    const refused = await reader.client.post(`/api/v1/channels/${general.id}/messages`, { content: 'hello' });
    expectError(refused, 403, 'insufficient_scope');
    expect(refused.body.error.message).to.include('messages:write');
    // nothing was posted
    expect(expectOk(await ws.owner.get(`/api/v1/channels/${general.id}/messages`)).data).to.have.length(0);
  });

  it('shows every key its scopes and conversations (null: no limit)', async () => {
    const ws = await newWorkspace(s);
    const general = await channel(ws);
    const limited = await keyOf(ws.owner, { scopes: ['messages:write', 'read'], conversation_ids: [general.id] });
    // in the documented order, whatever order they were asked in
    expect(limited.scopes).to.deep.equal(['read', 'messages:write']);
    expect(limited.conversation_ids).to.deep.equal([general.id]);
    const listed = expectOk(await ws.owner.get('/api/v1/api-keys')).data;
    expect(listed.find((k: { id: string }) => k.id === limited.id)).to.deep.include({ scopes: ['read', 'messages:write'], conversation_ids: [general.id] });
    expect(listed.find((k: { name: string }) => k.name === 'bootstrap')).to.deep.include({ scopes: null, conversation_ids: null });
  });

  it('refuses unknown scopes, repeated ones, empty lists and ids that are not ids with 400 validation_error', async () => {
    const ws = await newWorkspace(s);
    for (const body of [{ scopes: ['write'] }, { scopes: ['read', 'read'] }, { scopes: [] }, { scopes: 'read' }, { conversation_ids: [] }, { conversation_ids: ['general'] }]) {
      expectError(await ws.owner.post('/api/v1/api-keys', { name: 'k', ...body }), 400, 'validation_error');
    }
  });

  describe('each route needs the scope its kind declares (over the whole route table)', () => {
    // Every route that needs a scope, its path's parameters filled with ids that
    // name nothing; a route added later is in this list by itself.
    const routes = apiRoutes(3)
      .tables.flatMap((table) => table.specs.map((spec) => ({ spec, path: table.prefix + spec.path })))
      .filter(({ spec }) => spec.scope !== 'public' && spec.scope !== 'any_key');

    it('covers routes of every scope', () => {
      expect(new Set(routes.map((r) => r.spec.scope))).to.have.keys([...SCOPES]);
    });

    it('refuses every route to a key with every scope but its own (403 insufficient_scope naming it), and does not to a key with only its own', async () => {
      const ws = await newWorkspace(s);
      const only = new Map<Scope, Client>();
      const allBut = new Map<Scope, Client>();
      for (const scope of SCOPES) {
        only.set(scope, (await keyOf(ws.owner, { scopes: [scope] })).client);
        allBut.set(scope, (await keyOf(ws.owner, { scopes: SCOPES.filter((x) => x !== scope) })).client);
      }
      for (const { spec, path } of routes) {
        const name = `${spec.method.toUpperCase()} ${path} (${spec.scope})`;
        const url = path.replace(/\{[^}]+\}/g, () => randomUUID());
        const body = spec.method === 'get' || spec.method === 'delete' ? undefined : {};
        const refused = await allBut.get(spec.scope as Scope)!.request(spec.method.toUpperCase(), url, body);
        expect(refused.status, `${name}: ${refused.text}`).to.equal(403);
        expect(refused.body.error.code, name).to.equal('insufficient_scope');
        expect(refused.body.error.message, name).to.include(spec.scope);
        const allowed = await only.get(spec.scope as Scope)!.request(spec.method.toUpperCase(), url, body);
        expect(allowed.body?.error?.code, `${name}: ${allowed.text}`).not.to.equal('insufficient_scope');
      }
    });

    it('the stream needs events', async () => {
      const ws = await newWorkspace(s);
      const reader = await keyOf(ws.owner, { scopes: ['read', 'messages:write'] });
      const refused = track(await openRaw(s.url, reader.key, { waitInit: false }));
      expect(refused.status).to.equal(403);
      expect(refused.body.error).to.include({ code: 'insufficient_scope' });
      expect(refused.body.error.message).to.include('events');
      const listener = await keyOf(ws.owner, { scopes: ['events'] });
      expect(track(await openRaw(s.url, listener.key)).status).to.equal(200);
    });
  });

  it("an agent key with admin scope still cannot create users: the scope never grants more than the agent's role", async () => {
    const ws = await newWorkspace(s);
    const agent = await ws.user({ is_agent: true });
    const admin = await keyOf(agent.client, { scopes: ['admin', 'read'] });
    expectError(await admin.client.post('/api/v1/users', { name: uniqueName('u') }), 403, 'forbidden');
    expectError(await admin.client.post('/api/v1/agents', { name: uniqueName('b') }), 403, 'forbidden');
    // A member's admin-scoped key cannot change the workspace either.
    const member = await ws.user();
    const memberAdmin = await keyOf(member.client, { scopes: ['admin'] });
    expectError(await memberAdmin.client.patch('/api/v1/workspaces/current', { name: 'taken over' }), 403, 'forbidden');
  });

  describe('keys made from a key only narrow', () => {
    it('a child cannot widen its parent’s scopes (403 insufficient_scope naming the scope), and keeps them when it asks none', async () => {
      const ws = await newWorkspace(s);
      const parent = await keyOf(ws.owner, { scopes: ['read', 'events'] });
      const wider = await parent.client.post('/api/v1/api-keys', { name: 'wider', scopes: ['read', 'messages:write'] });
      expectError(wider, 403, 'insufficient_scope');
      expect(wider.body.error.message).to.include('messages:write');
      expectError(await parent.client.post('/api/v1/api-keys', { name: 'admin', scopes: ['admin'] }), 403, 'insufficient_scope');
      const same = await keyOf(parent.client);
      expect(same.scopes).to.deep.equal(['read', 'events']);
      const narrower = await keyOf(parent.client, { scopes: ['read'] });
      expect(narrower.scopes).to.deep.equal(['read']);
      // and the grandchild of the narrower one cannot get events back
      expectError(await narrower.client.post('/api/v1/api-keys', { name: 'back', scopes: ['events'] }), 403, 'insufficient_scope');
      expect(expectOk(await ws.owner.get('/api/v1/api-keys')).data.filter((k: { name: string }) => ['wider', 'admin', 'back'].includes(k.name))).to.have.length(0);
    });

    it('a child cannot reach a conversation its parent does not (404, as hidden), and keeps its parent’s when it asks none', async () => {
      const ws = await newWorkspace(s);
      const [a, b] = [await channel(ws), await channel(ws)];
      const parent = await keyOf(ws.owner, { conversation_ids: [a.id] });
      expectError(await parent.client.post('/api/v1/api-keys', { name: 'other', conversation_ids: [b.id] }), 404, 'not_found');
      expectError(await parent.client.post('/api/v1/api-keys', { name: 'both', conversation_ids: [a.id, b.id] }), 404, 'not_found');
      expect((await keyOf(parent.client)).conversation_ids).to.deep.equal([a.id]);
      expect((await keyOf(parent.client, { conversation_ids: [a.id] })).conversation_ids).to.deep.equal([a.id]);
      // An unlimited key cannot limit a key to what its user cannot read either.
      const member = await ws.user();
      const secret = await channel(ws, { is_private: true });
      expectError(await member.client.post('/api/v1/api-keys', { name: 'peek', conversation_ids: [secret.id] }), 404, 'not_found');
      expectError(await member.client.post('/api/v1/api-keys', { name: 'nothing', conversation_ids: [randomUUID()] }), 404, 'not_found');
    });

    it("a sign-in link made with a limited key gives a key with the same limits", async () => {
      const ws = await newWorkspace(s);
      const a = await channel(ws);
      const parent = await keyOf(ws.owner, { scopes: ['read'], conversation_ids: [a.id] });
      const link = expectOk(await parent.client.post('/api/v1/auth/links', {}), 201).data;
      const code = new URL(link.url).hash.replace(/^#code=/, '');
      const signed = expectOk(await new Client(s.url).post('/api/v1/auth/exchange', { code })).data;
      expect(signed.api_key).to.deep.include({ scopes: ['read'], conversation_ids: [a.id] });
      expectError(await new Client(s.url, signed.api_key.key).post(`/api/v1/channels/${a.id}/messages`, { content: 'x' }), 403, 'insufficient_scope');
    });
  });

  describe('a key limited to one channel sees the others as absent everywhere', () => {
    let ws: TestWorkspace;
    let mine: { id: string };
    let other: { id: string };
    let dm: { id: string };
    let dmPeer: { id: string };
    let limited: Client;
    let limitedKey: string;

    before(async () => {
      ws = await newWorkspace(s);
      mine = await channel(ws);
      other = await channel(ws);
      dmPeer = await ws.user();
      dm = expectOk(await ws.owner.post('/api/v1/dms', { user_ids: [dmPeer.id] }), 201).data;
      const made = await keyOf(ws.owner, { conversation_ids: [mine.id] });
      limited = made.client;
      limitedKey = made.key;
    });

    it('lists: GET /channels shows only its channel, GET /dms nothing, incoming webhooks only its channel’s', async () => {
      expect(expectOk(await limited.get('/api/v1/channels')).data.map((c: { id: string }) => c.id)).to.deep.equal([mine.id]);
      expect(expectOk(await limited.get('/api/v1/dms')).data).to.deep.equal([]);
      const hookHere = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: mine.id, name: 'here' }), 201).data;
      const hookThere = expectOk(await ws.owner.post('/api/v1/webhooks/incoming', { channel_id: other.id, name: 'there' }), 201).data;
      expect(expectOk(await limited.get('/api/v1/webhooks/incoming')).data.map((h: { id: string }) => h.id)).to.deep.equal([hookHere.id]);
      // nor can it delete the other channel's hook, which answers as one that does not exist
      const gone = await limited.delete(`/api/v1/webhooks/incoming/${hookThere.id}`);
      expectError(gone, 404, 'not_found');
      expect(gone.body).to.deep.equal((await limited.delete(`/api/v1/webhooks/incoming/${hookThere.id.replace(/.$/, (c: string) => (c === 'a' ? 'b' : 'a'))}`)).body);
      expect(expectOk(await ws.owner.get('/api/v1/webhooks/incoming')).data.map((h: { id: string }) => h.id)).to.include(hookThere.id);
    });

    it('direct calls on another channel or conversation answer 404 as if it did not exist, reads and writes alike', async () => {
      const message = await post(ws.owner, other.id, 'elsewhere');
      const calls: [string, string, unknown?][] = [
        ['GET', `/api/v1/channels/${other.id}`],
        ['GET', `/api/v1/channels/${other.id}/messages`],
        ['GET', `/api/v1/channels/${other.id}/messages/${message.id}`],
        ['GET', `/api/v1/channels/${other.id}/members`],
        ['POST', `/api/v1/channels/${other.id}/messages`, { content: 'x' }],
        ['PATCH', `/api/v1/channels/${other.id}`, { description: 'x' }],
        ['POST', `/api/v1/channels/${other.id}/members`, { user_id: ws.ownerId }],
        ['POST', `/api/v1/channels/${other.id}/messages/${message.id}/reactions`, { emoji: 'tada' }],
        ['POST', `/api/v1/channels/${other.id}/read`, { message_id: message.id }],
        ['POST', `/api/v1/channels/${other.id}/typing`, {}],
        ['GET', `/api/v1/dms/${dm.id}`],
        ['GET', `/api/v1/dms/${dm.id}/messages`],
        ['POST', `/api/v1/dms/${dm.id}/messages`, { content: 'x' }],
        ['POST', '/api/v1/webhooks/incoming', { channel_id: other.id, name: 'x' }],
      ];
      for (const [method, path, body] of calls) {
        const res = await limited.request(method, path, body);
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(404);
        // the same answer as for something that does not exist
        const none = await limited.request(method, path.replace(other.id, randomUUID()).replace(dm.id, randomUUID()), body);
        expect(res.body, `${method} ${path}`).to.deep.equal(none.body);
      }
      expect(expectOk(await ws.owner.get(`/api/v1/channels/${other.id}/messages`)).data.map((m: { content: string }) => m.content)).to.deep.equal(['elsewhere']);
      // its own channel answers
      expectOk(await limited.post(`/api/v1/channels/${mine.id}/messages`, { content: 'here' }), 201);
    });

    it('cannot make a channel or open a conversation, which it could not reach (403 insufficient_scope), not even the DM that exists', async () => {
      const peer = await ws.user();
      const channels = expectOk(await ws.owner.get('/api/v1/channels?limit=200')).data.length;
      expectError(await limited.post('/api/v1/channels', { name: uniqueName('new').slice(0, 60) }), 403, 'insufficient_scope');
      expectError(await limited.post('/api/v1/dms', { user_ids: [peer.id] }), 403, 'insufficient_scope');
      const existing = await limited.post('/api/v1/dms', { user_ids: [dmPeer.id] });
      expectError(existing, 403, 'insufficient_scope');
      expect(existing.text).not.to.include(dm.id);
      expect(expectOk(await ws.owner.get('/api/v1/channels?limit=200')).data).to.have.length(channels);
      expect(expectOk(await ws.owner.get('/api/v1/dms')).data.map((c: { id: string }) => c.id)).to.deep.equal([dm.id]);
    });

    it('search finds messages of its channel only, even when asked for another', async () => {
      const word = `zebra${randomUUID().slice(0, 8)}`;
      const here = await post(ws.owner, mine.id, `${word} here`);
      await post(ws.owner, other.id, `${word} there`);
      await post(ws.owner, mine.id, `${word} again`);
      expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: `${word} in a dm` }), 201);
      expect(expectOk(await ws.owner.get(`/api/v1/search/messages?q=${word}`)).data).to.have.length(4);
      const found = expectOk(await limited.get(`/api/v1/search/messages?q=${word}`)).data;
      expect(found.map((m: { channel_id: string }) => m.channel_id)).to.deep.equal([mine.id, mine.id]);
      expect(found.map((m: { id: string }) => m.id)).to.include(here.id);
      expect(expectOk(await limited.get(`/api/v1/search/messages?q=${word}&channel_id=${other.id}`)).data).to.deep.equal([]);
    });

    it('files: another person’s upload posted in another channel is absent (404), posted in its channel there; its own user’s is there', async () => {
      const peer = await ws.user();
      const upload = async (name: string) => {
        const up = await uploadFile(s.url, { key: peer.key, data: Buffer.from(name), name, type: 'text/plain' });
        expect(up.status).to.equal(201);
        return up.body.data as { id: string; name: string };
      };
      const theirs = await upload('theirs.txt');
      const shared = await upload('shared.txt');
      // Files follow their conversations (contract §17): the peer posts each where the owner reads it.
      for (const [channelId, file] of [[other.id, theirs], [mine.id, shared]] as const) {
        expectOk(await ws.owner.post(`/api/v1/channels/${channelId}/members`, { user_id: peer.id }), 201);
        expectOk(await peer.client.post(`/api/v1/channels/${channelId}/messages`, { content: file.name, metadata: { type: 'axid.file', data: { file_id: file.id } } }), 201);
      }
      const ours = await uploadFile(s.url, { key: ws.ownerKey, data: Buffer.from('our file'), name: 'ours.txt', type: 'text/plain' });
      expectOk(await ws.owner.get(`/api/v1/files/${theirs.id}`));
      expectOk(await limited.get(`/api/v1/files/${shared.id}`));
      const hidden = await limited.get(`/api/v1/files/${theirs.id}`);
      expectError(hidden, 404, 'not_found');
      expect(hidden.body).to.deep.equal((await limited.get(`/api/v1/files/${randomUUID()}`)).body);
      expectOk(await limited.get(`/api/v1/files/${ours.body.data.id}`));
    });

    /** Frames about `channelId`, wherever they name it. */
    const about = (frames: Frame[], channelId: string) => frames.filter((f) => JSON.stringify(f.data).includes(channelId));

    it('the stream carries only its channel’s events (others’ messages, a new channel, a DM are absent)', async () => {
      const stream = track(await openRaw(s.url, limitedKey));
      const control = track(await openRaw(s.url, ws.ownerKey));
      const elsewhere = await post(ws.owner, other.id, 'stream elsewhere');
      const created = await channel(ws);
      const inDm = expectOk(await ws.owner.post(`/api/v1/dms/${dm.id}/messages`, { content: 'stream dm' }), 201).data;
      const here = await post(ws.owner, mine.id, 'stream here');
      // The control stream (same user, no limit) got all of it: routed to both at once.
      for (const id of [elsewhere.id, inDm.id, here.id]) await control.waitFor((f) => f.event === 'message.created' && f.data.message.id === id);
      await control.waitFor((f) => f.event === 'channel.created' && f.data.channel.id === created.id);
      // One more after them: once it arrives, anything routed before it has too.
      const last = await post(ws.owner, mine.id, 'stream last');
      await stream.waitFor((f) => f.event === 'message.created' && f.data.message.id === last.id);
      expect(stream.events('message.created').map((f) => f.data.message.id)).to.deep.equal([here.id, last.id]);
      for (const id of [other.id, created.id, dm.id]) expect(about(stream.frames, id), id).to.deep.equal([]);
    });

    it('a replay (Last-Event-ID) carries only its channel’s events', async () => {
      const first = track(await openRaw(s.url, limitedKey));
      const from = first.frames[0]!.id!;
      first.close();
      const control = track(await openRaw(s.url, ws.ownerKey));
      const elsewhere = await post(ws.owner, other.id, 'replay elsewhere');
      const here = await post(ws.owner, mine.id, 'replay here');
      for (const id of [elsewhere.id, here.id]) await control.waitFor((f) => f.event === 'message.created' && f.data.message.id === id);
      const resumed = track(await openRaw(s.url, limitedKey, { headers: { 'Last-Event-ID': from } }));
      expect(resumed.frames[0]!.data.resumed).to.equal(true);
      const last = await post(ws.owner, mine.id, 'replay last');
      await resumed.waitFor((f) => f.event === 'message.created' && f.data.message.id === last.id);
      const ids = resumed.events('message.created').map((f) => f.data.message.id);
      expect(ids).to.include(here.id).and.include(last.id).and.not.include(elsewhere.id);
      expect(about(resumed.frames, other.id)).to.deep.equal([]);
    });

    it('an event subscription it makes delivers only its channel’s events', async () => {
      const limitedReceiver = await startReceiver();
      const controlReceiver = await startReceiver();
      receivers.push(limitedReceiver, controlReceiver);
      expectOk(await limited.post('/api/v1/event-subscriptions', { url: limitedReceiver.url }), 201);
      expectOk(await ws.owner.post('/api/v1/event-subscriptions', { url: controlReceiver.url }), 201);
      const elsewhere = await post(ws.owner, other.id, 'delivery elsewhere');
      const created = await channel(ws);
      const here = await post(ws.owner, mine.id, 'delivery here');
      const isMessage = (id: string) => (d: { body: { type: string; data: { message?: { id: string } } } }) => d.body.type === 'message.created' && d.body.data.message?.id === id;
      await controlReceiver.waitFor(1, isMessage(elsewhere.id));
      await controlReceiver.waitFor(1, isMessage(here.id));
      await limitedReceiver.waitFor(1, isMessage(here.id));
      // Every delivery made is done (or dropped): nothing about the others is coming.
      const queue = new Queue(DELIVERY_QUEUE, { connection: s.rt.redis, prefix: queuePrefix(s.rt.config) });
      try {
        await waitFor(async () => Object.values(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children')).every((n) => n === 0), 'an idle delivery queue');
      } finally {
        await queue.close();
      }
      for (const id of [other.id, created.id, dm.id]) expect(limitedReceiver.deliveries.filter((d) => d.raw.includes(id)), id).to.deep.equal([]);
      expect(controlReceiver.deliveries.some((d) => d.raw.includes(created.id))).to.equal(true);
    });
  });
});

describe('scoped keys at level 2', () => {
  it('POST /api-keys refuses scopes and conversation_ids as the unknown fields they are there, as it does any unknown field', async () => {
    const ws = await newWorkspace(stack());
    for (const field of ['scopes', 'conversation_ids']) {
      const res = await ws.owner.post('/api/v1/api-keys', { name: 'k', [field]: ['read'] });
      expectError(res, 400, 'validation_error');
      const unknown = await ws.owner.post('/api/v1/api-keys', { name: 'k', [`${field}_x`]: ['read'] });
      expect(res.body.error.message).to.equal(unknown.body.error.message.replace(`${field}_x`, field));
    }
  });

  it('shows keys as before: no scopes or conversation_ids on a key, made or listed', async () => {
    const ws = await newWorkspace(stack());
    const made = expectOk(await ws.owner.post('/api/v1/api-keys', { name: 'k' }), 201).data;
    expect(Object.keys(made).sort()).to.deep.equal(['created_at', 'expires_at', 'id', 'key', 'name', 'prefix']);
    for (const key of expectOk(await ws.owner.get('/api/v1/api-keys')).data) expect(Object.keys(key).sort()).to.deep.equal(['created_at', 'expires_at', 'id', 'name', 'prefix']);
  });

  it('documents nothing of them: no scope on an operation, no insufficient_scope, keys without the fields (level 3 has all three)', () => {
    const two = JSON.stringify(buildOpenApi(apiRoutes(2).tables));
    const three = JSON.stringify(buildOpenApi(apiRoutes(3).tables));
    for (const mark of ['x-scope', 'insufficient_scope', 'conversation_ids']) {
      expect(two, mark).not.to.include(mark);
      expect(three, mark).to.include(mark);
    }
  });
});
