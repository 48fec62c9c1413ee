// The sharded event bus (EVENT_SHARDS=4, shared/event-bus.ts): a gateway reads
// only the shards its streams need, starts a shard's reader when a user joins
// one of its channels with no gap, stops it when no stream needs it, and a
// replay merges the shards in commit order (services/gateway/bus.ts).
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { channelShard } from '../../shared/event-bus.js';
import { createLogger } from '../../shared/logger.js';
import { serverLevels, type Client } from '../support/client.js';
import { startGateway } from '../support/gateway.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

const SHARDS = 4;

async function until(what: string, check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the sharded event bus (EVENT_SHARDS=4)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let s: Stack;
  const gateways: Awaited<ReturnType<typeof startGateway>>[] = [];
  const streams: RawStream[] = [];

  before(async () => {
    env = testEnv({ EVENT_SHARDS: String(SHARDS), FEATURE_LEVEL: '3' });
    s = await startStack(env.config, createLogger(env.config.logLevel));
    serverLevels.set(s.url, '3');
    for (let i = 0; i < 2; i++) gateways.push(await startGateway({ readerLingerMs: 0 }, s));
  });

  after(async () => {
    for (const stream of streams) stream.close();
    for (const g of gateways) await g.close();
    serverLevels.delete(s.url);
    await s?.close();
    await env?.cleanup();
  });

  async function channelsOnTwoShards(owner: Client): Promise<[string, string]> {
    const byShard = new Map<number, string>();
    while (byShard.size < 2) {
      const res = await owner.post('/api/v1/channels', { name: uniqueName('shard'), is_private: false });
      expect(res.status).to.equal(201);
      byShard.set(channelShard(res.body.data.id, SHARDS), res.body.data.id);
    }
    return [...byShard.values()] as [string, string];
  }

  const post = async (owner: Client, channelId: string, content: string) => {
    const res = await owner.post(`/api/v1/channels/${channelId}/messages`, { content });
    expect(res.status).to.equal(201);
    return res.body.data.id as string;
  };

  it('reads only the shards of its streams’ channels, joins one with no gap, stops when no stream needs it, and replays across shards in order', async () => {
    const [g1, g2] = gateways as [(typeof gateways)[0], (typeof gateways)[0]];
    const ws = await newWorkspace(s);
    const member = await ws.user();
    const [x, y] = await channelsOnTwoShards(ws.owner);
    const [sx, sy] = [channelShard(x, SHARDS), channelShard(y, SHARDS)];
    expect((await ws.owner.post(`/api/v1/channels/${x}/members`, { user_id: member.id })).status).to.equal(201);

    expect(g1.gateway.shardsRead()).to.deep.equal([0]);
    const stream = await openRaw(g1.url, member.key);
    streams.push(stream);
    expect(g1.gateway.shardsRead()).to.deep.equal([0, sx]);
    expect(g2.gateway.shardsRead(), 'a gateway with no stream reads shard 0 only').to.deep.equal([0]);

    // Joining a channel of a shard not read yet: the join and what follows at once arrive.
    expect((await ws.owner.post(`/api/v1/channels/${y}/members`, { user_id: member.id })).status).to.equal(201);
    const first = await post(ws.owner, y, 'right after the join');
    await stream.waitFor((f) => f.event === 'message.created' && f.data.message.id === first);
    const events = stream.frames.map((f) => f.event);
    expect(events.indexOf('channel.member_added')).to.be.below(events.indexOf('message.created'));
    expect(g1.gateway.shardsRead()).to.deep.equal([0, sx, sy].sort((a, b) => a - b));

    // Missed while away, read back from both shards on the other gateway, in commit order.
    const last = stream.frames.at(-1)!;
    stream.close();
    const missed: string[] = [];
    for (let i = 0; i < 10; i++) missed.push(await post(ws.owner, i % 2 ? x : y, `away ${i}`));
    const resumed = await openRaw(g2.url, member.key, { headers: { 'Last-Event-ID': last.id! } });
    streams.push(resumed);
    expect(resumed.frames[0]!.data.resumed).to.equal(true);
    const got = await resumed.waitForCount((f) => f.event === 'message.created', missed.length);
    expect(got.map((f) => f.data.message.id)).to.deep.equal(missed);
    expect(g2.gateway.shardsRead()).to.deep.equal([0, sx, sy].sort((a, b) => a - b));

    // The first gateway has no stream left: it reads shard 0 only again.
    await until('g1 to stop its channel shards', () => g1.gateway.shardsRead().length === 1);
    expect(g1.gateway.shardsRead()).to.deep.equal([0]);
  });
});
