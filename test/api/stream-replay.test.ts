// Replay (level 3, contract §9; docs/realtime.md "Resuming"): frames carry
// ids, a stream opened with the last one gets what it missed, on any gateway.
import { expect } from 'chai';
import { startGateway } from '../support/gateway.js';
import { openRaw, type Frame, type RawStream } from '../support/sse.js';
import { level3Stack, newWorkspace, stack, uniqueName, type TestWorkspace } from '../support/stack.js';
import type { Client } from '../support/client.js';

const messages = (s: RawStream) => s.frames.filter((f) => f.event === 'message.created');

async function channel(owner: Client, isPrivate: boolean, members: string[]): Promise<string> {
  const res = await owner.post('/api/v1/channels', { name: uniqueName('replay'), is_private: isPrivate });
  expect(res.status).to.equal(201);
  for (const user_id of members) expect((await owner.post(`/api/v1/channels/${res.body.data.id}/members`, { user_id })).status).to.equal(201);
  return res.body.data.id;
}

async function post(owner: Client, channelId: string, content: string) {
  const res = await owner.post(`/api/v1/channels/${channelId}/messages`, { content });
  expect(res.status).to.equal(201);
  return res.body.data.id as string;
}

describe('GET /api/v1/stream: replay (level 3)', function () {
  this.timeout(30_000);
  const open: { close(): void }[] = [];
  const track = <T extends { close(): void }>(s: T) => (open.push(s), s);
  let other: Awaited<ReturnType<typeof startGateway>> | null = null;
  afterEach(async () => {
    for (const s of open.splice(0)) s.close();
    await other?.close();
    other = null;
  });

  async function setUp() {
    const s = await level3Stack();
    const ws: TestWorkspace = await newWorkspace(s);
    const member = await ws.user();
    return { s, ws, member };
  }

  it('gives every frame an id and init resumed:false on a fresh stream', async () => {
    const { s, ws, member } = await setUp();
    const pub = await channel(ws.owner, false, [member.id]);
    const stream = track(await openRaw(s.url, member.key));
    const init = stream.frames[0]!;
    expect(init.event).to.equal('init');
    expect(init.data.resumed).to.equal(false);
    expect(init.id).to.be.a('string').and.not.equal('');
    await post(ws.owner, pub, 'hello');
    const frame = await stream.waitFor((f) => f.event === 'message.created');
    expect(frame.id).to.be.a('string').and.not.equal(init.id);
  });

  it('replays on the other gateway exactly the missed events the user may see now, in order, once, then goes live', async () => {
    const { s, ws, member } = await setUp();
    const pub = await channel(ws.owner, false, [member.id]);
    const priv = await channel(ws.owner, true, [member.id]);
    const first = track(await openRaw(s.url, member.key));
    await post(ws.owner, pub, 'before');
    const seen = await first.waitFor((f) => f.event === 'message.created');
    first.close();

    // 50 messages across both channels; the member leaves the private one half way.
    const expected: string[] = [];
    for (let i = 0; i < 50; i++) {
      if (i === 25) expect((await member.client.delete(`/api/v1/channels/${priv}/members/${member.id}`)).status).to.equal(204);
      const inPublic = i % 2 === 0;
      const id = await post(ws.owner, inPublic ? pub : priv, `m${i}`);
      if (inPublic) expected.push(id);
    }

    other = await startGateway({}, s);
    const resumed = track(await openRaw(other.url, member.key, { headers: { 'Last-Event-ID': seen.id! } }));
    expect(resumed.frames[0]!.event).to.equal('init');
    expect(resumed.frames[0]!.data.resumed).to.equal(true);
    const live = await post(ws.owner, pub, 'live');
    await resumed.waitFor((f) => f.event === 'message.created' && f.data.message.id === live);
    const ids = messages(resumed).map((f) => f.data.message.id);
    expect(ids).to.deep.equal([...expected, live]);
    expect(messages(resumed).every((f) => f.data.message.channel_id === pub)).to.equal(true);
    expect(new Set(resumed.frames.map((f) => f.id)).size).to.equal(resumed.frames.length);

    // The query parameter (EventSource) works the same, from the middle of the replay.
    const middle = messages(resumed)[9]!;
    const again = track(await openRaw(s.url, member.key, { query: `last_event_id=${encodeURIComponent(middle.id!)}` }));
    expect(again.frames[0]!.data.resumed).to.equal(true);
    await again.waitFor((f) => f.event === 'message.created' && f.data.message.id === live);
    expect(messages(again).map((f) => f.data.message.id)).to.deep.equal([...expected.slice(10), live]);
  });

  it('replays only what live delivery sent: nothing of a conversation from before the reader joined it or from while they were out of it', async () => {
    const { s, ws, member } = await setUp();
    // A stream open the whole time: what the member received live.
    const live = track(await openRaw(s.url, member.key));
    const start = live.frames[0]!.id!;
    const hidden: string[] = [];

    // A private channel: a message posted, edited, reacted to and deleted before the member is added.
    const priv = await channel(ws.owner, true, []);
    const early = await post(ws.owner, priv, 'before you came');
    hidden.push(early);
    expect((await ws.owner.patch(`/api/v1/channels/${priv}/messages/${early}`, { content: 'edited before you came' })).status).to.equal(200);
    expect((await ws.owner.post(`/api/v1/channels/${priv}/messages/${early}/reactions`, { emoji: 'eyes' })).status).to.equal(201);
    expect((await ws.owner.delete(`/api/v1/channels/${priv}/messages/${early}`)).status).to.equal(204);
    // A public channel the member joins later: the same.
    const pub = await channel(ws.owner, false, []);
    const earlyPublic = await post(ws.owner, pub, 'public, before you joined');
    hidden.push(earlyPublic);
    expect((await ws.owner.delete(`/api/v1/channels/${pub}/messages/${earlyPublic}`)).status).to.equal(204);

    for (const c of [priv, pub]) expect((await ws.owner.post(`/api/v1/channels/${c}/members`, { user_id: member.id })).status).to.equal(201);
    await post(ws.owner, priv, 'welcome');
    const seenInPublic = await post(ws.owner, pub, 'welcome too');
    // Out and back in: what happened while out is not the member's either.
    expect((await ws.owner.delete(`/api/v1/channels/${pub}/members/${member.id}`)).status).to.equal(204);
    const whileOut = await post(ws.owner, pub, 'while you were out');
    hidden.push(whileOut);
    expect((await ws.owner.delete(`/api/v1/channels/${pub}/messages/${seenInPublic}`)).status).to.equal(204);
    expect((await ws.owner.post(`/api/v1/channels/${pub}/members`, { user_id: member.id })).status).to.equal(201);
    const last = await post(ws.owner, pub, 'back');
    await live.waitFor((f) => f.event === 'message.created' && f.data.message.id === last);

    const replay = track(await openRaw(s.url, member.key, { headers: { 'Last-Event-ID': start } }));
    expect(replay.frames[0]!.data.resumed).to.equal(true);
    await replay.waitFor((f) => f.event === 'message.created' && f.data.message.id === last);
    // Ephemeral events (presence, typing) are never replayed; everything else is what came live, in order.
    const durable = (frames: Frame[]) => frames.slice(1).filter((f) => !['presence.updated', 'typing'].includes(f.event)).map((f) => ({ event: f.event, data: f.data }));
    // Order is promised within a conversation (one shard), not across conversations when EVENT_SHARDS > 1.
    const perConversation = (frames: { event: string; data: Frame['data'] }[]) => {
      const by: Record<string, unknown[]> = {};
      for (const f of frames) (by[String(f.data.channel_id ?? f.data.message?.channel_id ?? f.data.channel?.id ?? '')] ??= []).push(f);
      return by;
    };
    const liveUntilLast = live.frames.slice(0, live.frames.findIndex((f) => f.event === 'message.created' && f.data.message.id === last) + 1);
    expect(perConversation(durable(replay.frames))).to.deep.equal(perConversation(durable(liveUntilLast)));
    expect(durable(replay.frames)).to.have.length(durable(liveUntilLast).length);
    expect(durable(replay.frames).map((f) => f.event)).to.include.members(['channel.member_added', 'channel.member_removed', 'message.created']);
    // Nothing names a message the member never could have seen (neither its id nor its content).
    for (const id of hidden) expect(replay.text()).to.not.include(id);
    expect(replay.text()).to.not.match(/before you|while you were out/);
  });

  it('answers resumed:false for an unknown id, one older than the retention, and one from before the streams were lost', async () => {
    const { s, ws, member } = await setUp();
    const pub = await channel(ws.owner, false, [member.id]);
    const first = track(await openRaw(s.url, member.key));
    await post(ws.owner, pub, 'one');
    const seen = (await first.waitFor((f) => f.event === 'message.created')) as Frame & { id: string };
    first.close();

    const resumedWith = async (id: string) => {
      const stream = track(await openRaw(s.url, member.key, { headers: { 'Last-Event-ID': id } }));
      return stream.frames[0]!.data.resumed as boolean;
    };
    expect(await resumedWith(seen.id)).to.equal(true);
    expect(await resumedWith('not-an-id')).to.equal(false);
    // The same position, dated past STREAM_RETENTION_SECONDS (600 s).
    const old = seen.id.replace(/\.(\d+)-(\d+)/g, (_, ms: string) => `.${Number(ms) - 601_000}-0`);
    expect(await resumedWith(old)).to.equal(false);

    // Redis loses the streams (a wipe: every key of the bus gone): a new epoch.
    for (const key of s.rt.bus.shards.flatMap((k) => [k.events, k.epoch])) await s.rt.redis.del(key);
    await post(ws.owner, pub, 'after the wipe');
    const fresh = track(await openRaw(s.url, member.key, { headers: { 'Last-Event-ID': seen.id } }));
    expect(fresh.frames[0]!.data.resumed).to.equal(false);
    await post(ws.owner, pub, 'live again');
    await fresh.waitFor((f) => f.event === 'message.created' && f.data.message.content === 'live again');
  });

  it('keeps the level-2 stream as documented: no id lines, no resumed, Last-Event-ID ignored', async () => {
    const ws = await newWorkspace();
    const stream = track(await openRaw(stack().url, ws.ownerKey, { headers: { 'Last-Event-ID': '0.abc.1-0' } }));
    expect(stream.frames[0]!.data).to.not.have.property('resumed');
    expect(stream.frames[0]!.data.presence).to.deep.equal({});
    const res = await ws.owner.post('/api/v1/channels', { name: uniqueName('l2'), is_private: false });
    expect(res.status).to.equal(201);
    await stream.waitFor((f) => f.event === 'channel.created');
    expect(stream.text()).to.not.match(/^id:/m);
  });
});
