import net from 'node:net';
import { expect } from 'chai';
import { expectError } from '../support/expect.js';
import { addMember, createChannel, createDm, fence, postMessage, removeMember } from '../support/channels.js';
import { startGateway } from '../support/gateway.js';
import { openEventSource, openRaw, type Frame, type RawStream } from '../support/sse.js';
import { newWorkspace, stack } from '../support/stack.js';
import { Client } from '../support/client.js';
import { recordEvents, type AxidEvent } from '../../shared/events.js';

const isFence = (token: string) => (f: Frame) => f.event === 'user.updated' && f.data.fence === token;
const messageIn = (channelId: string) => (f: Frame) => f.event === 'message.created' && f.data.message.channel_id === channelId;

describe('GET /api/v1/stream', () => {
  const open: { close(): void }[] = [];
  const track = <T extends { close(): void }>(s: T) => (open.push(s), s);
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  const raw = async (key: string, url = stack().url) => track(await openRaw(url, key));

  describe('the stream itself', () => {
    it('answers text/event-stream with anti-buffering headers, the service headers and init as the first frame', async () => {
      const ws = await newWorkspace();
      const s = await raw(ws.ownerKey);
      expect(s.status).to.equal(200);
      expect(s.headers['content-type']).to.match(/^text\/event-stream/);
      expect(s.headers['cache-control']).to.equal('no-cache');
      expect(s.headers['x-accel-buffering']).to.equal('no');
      expect(s.headers.connection).to.equal('keep-alive');
      expect(s.headers['x-service-feature-level']).to.equal('2');
      expect(s.headers['x-ratelimit-limit']).to.match(/^\d+$/);
      expect(s.headers['x-ratelimit-remaining']).to.match(/^\d+$/);
      expect(s.headers['x-ratelimit-reset']).to.match(/^\d+$/);
      expect(s.text().startsWith('event: init\ndata: ')).to.equal(true);
      const init = s.frames[0] as Frame;
      expect(init.event).to.equal('init');
      expect(init.data.type).to.equal('init');
      expect(init.data.presence).to.deep.equal({});
      expect(init.data.user).to.include({ id: ws.ownerId, role: 'owner', is_agent: false });
      expect(init.data.workspace.id).to.equal(ws.workspaceId);
      expect(init.data.workspace.name).to.be.a('string');
    });

    it('writes every event as event/data frames with a matching type and never an id line', async () => {
      const ws = await newWorkspace();
      const s = await raw(ws.ownerKey);
      const created = await ws.user();
      const frame = await s.waitFor((f) => f.event === 'user.created' && f.data.user.id === created.id);
      expect(frame.data.type).to.equal('user.created');
      expect(frame.data.user.name).to.be.a('string');
      expect(frame.raw.split('\n')).to.have.length(2);
      expect(s.text()).not.to.match(/^id:/m);
      expect(s.text()).not.to.match(/^retry:/m);
    });

    it('answers 401 unauthorized as the JSON envelope without a key, with an unknown key and with a revoked key', async () => {
      const ws = await newWorkspace();
      const client = new Client(stack().url);
      expectError(await client.get('/api/v1/stream'), 401, 'unauthorized');
      const bad = await client.withKey('axid_not-a-real-key').get('/api/v1/stream');
      expectError(bad, 401, 'unauthorized');
      expect(bad.headers.get('content-type')).to.match(/json/);
      expect(bad.headers.get('x-ratelimit-limit')).to.match(/^\d+$/);
      const extra = await ws.owner.post('/api/v1/api-keys', { name: 'temp' });
      await ws.owner.delete(`/api/v1/api-keys/${extra.body.data.id}`);
      expectError(await client.withKey(extra.body.data.key).get('/api/v1/stream'), 401, 'unauthorized');
    });

    it('works with the eventsource client', async () => {
      const ws = await newWorkspace();
      const es = track(await openEventSource(stack().url, ws.ownerKey));
      const init = es.received[0];
      expect(init?.type).to.equal('init');
      expect(init?.data.user.id).to.equal(ws.ownerId);
      const created = await ws.user({ is_agent: true });
      const ev = await es.waitFor((e) => e.type === 'user.created' && e.data.user.id === created.id);
      expect(ev.data.user.is_agent).to.equal(true);
    });

    it('sends a keep-alive comment on the configured interval', async () => {
      const gw = await startGateway({ keepAliveMs: 40 });
      try {
        const ws = await newWorkspace();
        const s = await openRaw(gw.url, ws.ownerKey);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(s.comments).to.be.at.least(2);
        expect(s.text()).to.include('\n\n: keep-alive\n\n');
        s.close();
      } finally {
        await gw.close();
      }
    });

    it('sends the keep-alive comment only to streams with nothing written lately', async () => {
      const gw = await startGateway({ keepAliveMs: 300 });
      try {
        const [busyWs, idleWs] = [await newWorkspace(), await newWorkspace()];
        const busy = await openRaw(gw.url, busyWs.ownerKey);
        const idle = await openRaw(gw.url, idleWs.ownerKey);
        const event: AxidEvent = { type: 'user.updated', to: { scope: 'workspace', workspace_id: busyWs.workspaceId }, data: { user: { id: 'x' } } };
        // An event every 30 ms for 900 ms: the busy stream is never silent for 300 ms.
        for (let i = 0; i < 30; i++) {
          await stack().rt.db.transaction((trx) => recordEvents(stack().rt, trx, [event]));
          await new Promise((resolve) => setTimeout(resolve, 30));
        }
        await busy.waitForCount((f) => f.event === 'user.updated', 30, 5_000);
        expect(busy.comments).to.equal(0);
        expect(idle.comments).to.be.at.least(2);
        busy.close();
        idle.close();
      } finally {
        await gw.close();
      }
    });

    it('ends every stream cleanly on close() with whole frames only', async () => {
      const gw = await startGateway();
      const ws = await newWorkspace();
      const a = await openRaw(gw.url, ws.ownerKey);
      const b = await openRaw(gw.url, ws.ownerKey);
      await gw.close();
      await Promise.all([a.ended, b.ended]);
      for (const s of [a, b]) {
        expect(s.res.complete, 'the chunked response was terminated properly').to.equal(true);
        expect(s.text().endsWith('\n\n')).to.equal(true);
      }
    });

    it('writes plain frames, without chunk framing, to an HTTP/1.0 client', async () => {
      const ws = await newWorkspace();
      const socket = net.connect(Number(new URL(stack().url).port), '127.0.0.1');
      track({ close: () => socket.destroy() });
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => (text += d));
      const until = (done: () => boolean) =>
        new Promise<void>((resolve, reject) => {
          if (done()) return resolve();
          const check = () => {
            if (!done()) return;
            socket.off('data', check);
            resolve();
          };
          socket.on('data', check);
          socket.once('close', () => reject(new Error(`the stream closed; received: ${text.slice(0, 300)}`)));
        });
      socket.write(`GET /api/v1/stream HTTP/1.0\r\nAuthorization: Bearer ${ws.ownerKey}\r\n\r\n`);
      const bodyOf = () => text.slice(text.indexOf('\r\n\r\n') + 4);
      await until(() => bodyOf().includes('\n\n'));
      const created = await ws.user();
      await until(() => bodyOf().includes(created.id));
      expect(text.startsWith('HTTP/1.1 200')).to.equal(true);
      expect(text.toLowerCase()).not.to.include('transfer-encoding');
      expect(bodyOf().startsWith('event: init\ndata: ')).to.equal(true);
      // Every line is a field of a frame or the blank line ending one: no chunk sizes in between.
      for (const line of bodyOf().split('\n')) expect(line).to.match(/^(event: |data: |: |$)/);
      expect(bodyOf()).to.include('event: user.created\ndata: ');
    });

    it('exposes its metrics', async () => {
      const ws = await newWorkspace();
      await raw(ws.ownerKey);
      const text = await (await fetch(`${stack().url}/metrics`)).text();
      for (const name of ['axid_sse_connections', 'axid_events_received_total', 'axid_events_delivered_total', 'axid_events_dropped_total', 'axid_sse_slow_disconnects_total', 'axid_stream_lag_ms']) {
        expect(text).to.include(name);
      }
      expect(Number(/^axid_sse_connections (\d+)/m.exec(text)?.[1])).to.be.at.least(1);
    });
  });

  describe('users and members', () => {
    it('sends user.created and member.updated to every member of the workspace, and nothing to other workspaces', async () => {
      const ws = await newWorkspace();
      const other = await newWorkspace();
      const member = await ws.user();
      const [owner, mine, outsider] = [await raw(ws.ownerKey), await raw(member.key), await raw(other.ownerKey)];
      const created = await ws.user();
      expect((await ws.owner.patch(`/api/v1/workspaces/current/members/${created.id}`, { role: 'admin' })).status).to.equal(200);
      for (const s of [owner, mine]) {
        await s.waitFor((f) => f.event === 'user.created' && f.data.user.id === created.id);
        const upd = await s.waitFor((f) => f.event === 'member.updated' && f.data.user.id === created.id);
        expect(upd.data.user.role).to.equal('admin');
      }
      const token = await fence(other.workspaceId);
      await outsider.waitFor(isFence(token));
      expect(outsider.frames.map((f) => f.event)).to.deep.equal(['init', 'user.updated']);
    });

    it('tells the workspace about member.removed and ends the removed user’s streams', async () => {
      const ws = await newWorkspace();
      const member = await ws.user();
      const owner = await raw(ws.ownerKey);
      const gone = await raw(member.key);
      const res = await ws.owner.delete(`/api/v1/workspaces/current/members/${member.id}`);
      expect(res.status, res.text).to.equal(204);
      await owner.waitFor((f) => f.event === 'member.removed' && f.data.user_id === member.id);
      await gone.ended;
      expect(gone.res.complete).to.equal(true);
      // the owner's stream goes on
      const token = await fence(ws.workspaceId);
      await owner.waitFor(isFence(token));
      expectError(await member.client.get('/api/v1/stream'), 401, 'unauthorized');
    });

    it('ends the streams opened with a revoked key, and only those; api_key.revoked never reaches clients', async () => {
      const ws = await newWorkspace();
      const second = await ws.owner.post('/api/v1/api-keys', { name: 'second' });
      expect(second.status).to.equal(201);
      const viaFirst = await raw(ws.ownerKey);
      const viaSecond = await raw(second.body.data.key);
      const res = await ws.owner.delete(`/api/v1/api-keys/${second.body.data.id}`);
      expect(res.status, res.text).to.equal(204);
      await viaSecond.ended;
      const token = await fence(ws.workspaceId);
      await viaFirst.waitFor(isFence(token));
      expect(viaFirst.isEnded()).to.equal(false);
      for (const s of [viaFirst, viaSecond]) expect(s.text()).not.to.include('api_key');
    });
    it('ends a stream opened with a key when the key expires, as on revocation', async () => {
      const ws = await newWorkspace();
      const expiresAt = Date.now() + 1_500;
      const short = await ws.owner.post('/api/v1/api-keys', { name: 'short', expires_at: new Date(expiresAt).toISOString() });
      expect(short.status, short.text).to.equal(201);
      const viaFirst = await raw(ws.ownerKey);
      const viaShort = await raw(short.body.data.key);
      await viaShort.ended;
      expect(Date.now()).to.be.at.least(expiresAt);
      const token = await fence(ws.workspaceId);
      await viaFirst.waitFor(isFence(token));
      expect(viaFirst.isEnded()).to.equal(false);
      // And it cannot be opened again.
      expectError(await new Client(stack().url, short.body.data.key).get('/api/v1/stream'), 401, 'key_expired');
    });
  });

  describe('channels and DMs', () => {
    it('sends a private channel’s events to its members only', async () => {
      const ws = await newWorkspace();
      const [a, b] = [await ws.user(), await ws.user()];
      const [sOwner, sA, sB] = [await raw(ws.ownerKey), await raw(a.key), await raw(b.key)];
      const channel = await createChannel(ws.workspaceId, ws.ownerId, { isPrivate: true, members: [a.id] });
      const msg = await postMessage(channel, ws.ownerId, 'secret');
      const token = await fence(ws.workspaceId);
      for (const s of [sOwner, sA]) {
        await s.waitFor(isFence(token));
        expect(s.frames.filter(messageIn(channel.id)).map((f) => f.data.message.id)).to.deep.equal([msg.id]);
      }
      expect(sOwner.events('channel.created').map((f) => f.data.channel.id)).to.deep.equal([channel.id]);
      expect(sA.events('channel.member_added').map((f) => f.data.user_id)).to.deep.equal([a.id]);
      await sB.waitFor(isFence(token));
      expect(sB.text()).not.to.include(channel.id);
    });

    it('sends a public channel’s creation to everyone and its messages to its members', async () => {
      const ws = await newWorkspace();
      const outsider = await ws.user();
      const [sOwner, sOut] = [await raw(ws.ownerKey), await raw(outsider.key)];
      const channel = await createChannel(ws.workspaceId, ws.ownerId);
      await postMessage(channel, ws.ownerId, 'hello');
      const token = await fence(ws.workspaceId);
      await sOwner.waitFor(messageIn(channel.id));
      await sOut.waitFor(isFence(token));
      expect(sOut.events('channel.created').map((f) => f.data.channel.id)).to.deep.equal([channel.id]);
      expect(sOut.frames.filter(messageIn(channel.id))).to.have.length(0);
    });

    it('starts sending a channel’s events to a member added while connected, and stops after removal', async () => {
      const ws = await newWorkspace();
      const user = await ws.user();
      const channel = await createChannel(ws.workspaceId, ws.ownerId, { isPrivate: true });
      const s = await raw(user.key);
      const before = await postMessage(channel, ws.ownerId, 'before');
      await addMember(channel, user.id);
      const during = await postMessage(channel, ws.ownerId, 'during');
      await removeMember(channel, user.id);
      const after = await postMessage(channel, ws.ownerId, 'after');
      const token = await fence(ws.workspaceId);
      await s.waitFor(isFence(token));
      // user.* events of the setup may still be in flight when the stream opens
      const seen = s.frames.filter((f) => f.event !== 'init' && !f.event.startsWith('user.')).map((f) => f.event === 'message.created' ? f.data.message.id : f.event);
      expect(seen).to.deep.equal(['channel.member_added', during.id, 'channel.member_removed']);
      expect(s.text()).not.to.include(before.id).and.not.to.include(after.id);
    });

    it('knows memberships that exist when the stream opens', async () => {
      const ws = await newWorkspace();
      const user = await ws.user();
      const channel = await createChannel(ws.workspaceId, ws.ownerId, { isPrivate: true, members: [user.id] });
      const dm = await createDm(ws.workspaceId, [ws.ownerId, user.id]);
      const s = await raw(user.key);
      const m1 = await postMessage(channel, ws.ownerId, 'one');
      const m2 = await postMessage(dm, ws.ownerId, 'two');
      await s.waitFor((f) => f.event === 'message.created' && f.data.message.id === m2.id);
      expect(s.events('message.created').map((f) => f.data.message.id)).to.deep.equal([m1.id, m2.id]);
    });

    it('sends dm.created to its members, then the DM’s messages to them only', async () => {
      const ws = await newWorkspace();
      const [a, c] = [await ws.user(), await ws.user()];
      const [sOwner, sA, sC] = [await raw(ws.ownerKey), await raw(a.key), await raw(c.key)];
      const dm = await createDm(ws.workspaceId, [ws.ownerId, a.id]);
      const msg = await postMessage(dm, a.id, 'psst');
      const token = await fence(ws.workspaceId);
      for (const s of [sOwner, sA]) {
        const created = await s.waitFor((f) => f.event === 'dm.created');
        expect(created.data.conversation.id).to.equal(dm.id);
        expect(created.data.conversation.member_ids).to.have.members([ws.ownerId, a.id]);
        await s.waitFor((f) => f.event === 'message.created' && f.data.message.id === msg.id);
      }
      await sC.waitFor(isFence(token));
      expect(sC.text()).not.to.include(dm.id);
    });

    it('sends a private channel’s later events to its creator from creation on', async () => {
      const ws = await newWorkspace();
      const creator = await ws.user();
      const s = await raw(creator.key);
      const channel = await createChannel(ws.workspaceId, creator.id, { isPrivate: true });
      const msg = await postMessage(channel, creator.id, 'mine');
      await s.waitFor((f) => f.event === 'message.created' && f.data.message.id === msg.id);
      expect(s.events('channel.created').map((f) => f.data.channel.id)).to.deep.equal([channel.id]);
    });
  });

  describe('order and load', () => {
    it('delivers 200 events recorded concurrently by several writers in the same order to every connection', async () => {
      const ws = await newWorkspace();
      const [a, b] = [await raw(ws.ownerKey), track(await openEventSource(stack().url, ws.ownerKey))];
      const writers = 5;
      const perWriter = 40;
      const db = stack().rt.db;
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          for (let i = 0; i < perWriter; i++) {
            const event: AxidEvent = { type: 'user.updated', to: { scope: 'workspace', workspace_id: ws.workspaceId }, data: { user: { id: `w${w}` }, w, i } };
            await db.transaction((trx) => recordEvents(stack().rt, trx, [event]));
          }
        }),
      );
      const total = writers * perWriter;
      const got = await a.waitForCount((f) => f.event === 'user.updated', total, 20_000);
      await b.waitForCount((e) => e.type === 'user.updated', total, 20_000);
      const seqA = got.map((f) => `${f.data.w}:${f.data.i}`);
      const seqB = b.received.filter((e) => e.type === 'user.updated').map((e) => `${e.data.w}:${e.data.i}`);
      expect(seqB).to.deep.equal(seqA);
      expect(new Set(seqA).size).to.equal(total);
      for (let w = 0; w < writers; w++) {
        const mine = got.filter((f) => f.data.w === w).map((f) => f.data.i);
        expect(mine).to.deep.equal([...mine].sort((x, y) => x - y));
      }
    });

    it('cuts off a client that stops reading while a reading client on the same gateway keeps receiving', async function () {
      this.timeout(60_000);
      const gw = await startGateway({ maxQueueBytes: 1024 * 1024 });
      try {
        const ws = await newWorkspace();
        const slow = await openRaw(gw.url, ws.ownerKey);
        const normal = await openRaw(gw.url, ws.ownerKey);
        slow.pause();
        const metric = () => stack().rt.metrics.registry.getSingleMetricAsString('axid_sse_slow_disconnects_total');
        const slowBefore = Number(/ (\d+)$/m.exec(await metric())?.[1] ?? 0);
        const padding = 'x'.repeat(16 * 1024);
        const db = stack().rt.db;
        let sent = 0;
        // Push until the slow stream is cut off (kernel buffers absorb a few MB first).
        const cutCount = async () => Number(/ (\d+)$/m.exec(await metric())?.[1] ?? 0);
        while ((await cutCount()) === slowBefore && sent < 2000) {
          const batch: AxidEvent[] = Array.from({ length: 20 }, (_, k) => ({
            type: 'user.updated',
            to: { scope: 'workspace', workspace_id: ws.workspaceId },
            data: { user: { id: ws.ownerId }, n: sent + k, padding },
          }));
          await db.transaction((trx) => recordEvents(stack().rt, trx, batch));
          sent += batch.length;
          await normal.waitForCount((f) => f.event === 'user.updated', sent, 20_000);
        }
        expect(await cutCount()).to.equal(slowBefore + 1);
        expect(gw.gateway.hub.size).to.equal(1);
        // The slow client, reading again, finds its stream ended short of what was sent.
        slow.res.resume();
        await slow.ended;
        expect(slow.events('user.updated').length).to.be.below(sent);
        const token = await fence(ws.workspaceId);
        await normal.waitFor(isFence(token), 20_000);
        expect(normal.isEnded()).to.equal(false);
        expect(normal.events('user.updated').filter((f) => f.data.n !== undefined).map((f) => f.data.n)).to.deep.equal(
          Array.from({ length: sent }, (_, i) => i),
        );
        normal.close();
        slow.close();
      } finally {
        await gw.close();
      }
    });
  });
});
