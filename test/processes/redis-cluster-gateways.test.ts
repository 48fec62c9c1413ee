// Axid as it is deployed on a Redis Cluster: a local six-node cluster
// (test/support/redis-cluster.ts), EVENT_SHARDS=4, FEATURE_LEVEL=3, and
// separate processes: an API process with the worker, two gateway processes
// (ROLES=gateway) and an API process with a small rate limit. One cluster and
// one set of processes for the whole file; the failover kills a primary, so it
// runs last.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { busKeys, channelShard } from '../../shared/event-bus.js';
import { promotableReplicas } from '../../shared/relay/event-stream.js';
import { Client, serverLevels } from '../support/client.js';
import { expectOk } from '../support/expect.js';
import { uploadFile, waitFor } from '../support/files.js';
import { LocalRedisCluster } from '../support/redis-cluster.js';
import { openRaw, type Frame, type RawStream } from '../support/sse.js';
import { processEnv, startProcess, type RunningProcess } from '../support/stack-process.js';
import { testEnv, uniqueName, type TestEnv } from '../support/stack.js';

const SHARDS = 4;
/** The limited API process's RATE_LIMIT_POINTS. */
const SMALL_LIMIT = 10;

/** A series' value on a process's /metrics. */
async function metric(p: RunningProcess, name: string): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`${name} not on ${p.url}/metrics`);
  return Number(m[1]);
}

const readers = (p: RunningProcess) => metric(p, 'axid_event_shard_readers');

/** Waits until a gateway reads `n` shards (a reader stops 10 s after no stream needs it: bus.ts). */
const readersBecome = (p: RunningProcess, n: number) => waitFor(async () => (await readers(p)) === n, `${p.url} to read ${n} shards`, 30_000);

const messageIds = (stream: RawStream) => stream.frames.filter((f) => f.event === 'message.created').map((f) => f.data.message.id as string);

describe('on a Redis Cluster with two gateway processes (EVENT_SHARDS=4)', function () {
  this.timeout(300_000);
  const ownerKey = randomBytes(32).toString('base64url');
  let cluster: LocalRedisCluster;
  let env: TestEnv;
  let api: RunningProcess;
  let limited: RunningProcess;
  let gw1: RunningProcess;
  let gw2: RunningProcess;
  let owner: Client;
  const streams: RawStream[] = [];
  const open = async (url: string, key: string, headers?: Record<string, string>) => {
    const s = await openRaw(url, key, headers ? { headers } : {});
    streams.push(s);
    return s;
  };

  before(async () => {
    cluster = await LocalRedisCluster.start();
    env = testEnv({ REDIS_CLUSTER_NODES: cluster.seeds, EVENT_SHARDS: String(SHARDS) });
    const base = processEnv(env, { BOOTSTRAP_ADMIN_KEY: ownerKey, FEATURE_LEVEL: '3', RATE_LIMIT_POINTS: '100000', LOG_LEVEL: 'warn' });
    api = await startProcess({ ...base, ROLES: 'api,worker' });
    [gw1, gw2, limited] = await Promise.all([
      startProcess({ ...base, ROLES: 'gateway' }),
      startProcess({ ...base, ROLES: 'gateway' }),
      startProcess({ ...base, ROLES: 'api', RATE_LIMIT_POINTS: String(SMALL_LIMIT) }),
    ]);
    for (const p of [api, limited, gw1, gw2]) serverLevels.set(p.url, '3');
    owner = new Client(api.url, ownerKey);
  });

  after(async () => {
    for (const s of streams) s.close();
    await Promise.all([api, limited, gw1, gw2].map((p) => p?.stop()));
    for (const p of [api, limited, gw1, gw2]) if (p) serverLevels.delete(p.url);
    await env?.cleanup();
    await cluster?.stop();
  });

  async function user() {
    const res = await owner.post('/api/v1/users', { name: uniqueName('cluster') });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.data.id as string, key: res.body.data.api_key as string };
  }

  /** Public channels on `count` different channel shards (1..SHARDS-1), created by the owner. */
  async function channelsOnShards(count: number): Promise<string[]> {
    const byShard = new Map<number, string>();
    while (byShard.size < count) {
      const res = await owner.post('/api/v1/channels', { name: uniqueName('shard'), is_private: false });
      expect(res.status, res.text).to.equal(201);
      const shard = channelShard(res.body.data.id, SHARDS);
      if (!byShard.has(shard)) byShard.set(shard, res.body.data.id);
    }
    return [...byShard.values()];
  }

  const addMember = async (channelId: string, userId: string) =>
    expect((await owner.post(`/api/v1/channels/${channelId}/members`, { user_id: userId })).status).to.equal(201);

  const post = async (channelId: string, content: string) => {
    const res = await owner.post(`/api/v1/channels/${channelId}/messages`, { content });
    expect(res.status, res.text).to.equal(201);
    return res.body.data.id as string;
  };

  it('delivers across both gateways, each reading only the shards its streams need, and fewer once the streams close', async () => {
    const [a, b, c] = (await channelsOnShards(3)) as [string, string, string];
    const [u1, u2, u3] = [await user(), await user(), await user()];
    await addMember(a, u1.id);
    await addMember(b, u2.id);
    await addMember(c, u3.id);

    // No stream: shard 0 only (the workspace-wide events and the joins).
    expect(await readers(gw1)).to.equal(1);
    expect(await readers(gw2)).to.equal(1);

    // A stream's shards are read before its init is written.
    const s1 = await open(gw1.url, u1.key);
    expect(await readers(gw1), 'gateway 1: shard 0 and the shard of channel a').to.equal(2);
    expect(await readers(gw2), 'gateway 2 has no stream yet').to.equal(1);
    const s2 = await open(gw2.url, u2.key);
    expect(await readers(gw2)).to.equal(2);
    const s3 = await open(gw2.url, u3.key);
    expect(await readers(gw2), 'gateway 2: shard 0 and the shards of channels b and c').to.equal(3);
    expect(await readers(gw1), 'gateway 1 did not start reading b or c').to.equal(2);

    // Realtime on both processes: each member gets its channel's posts, in order, and nothing else.
    const received = await metric(gw1, 'axid_events_received_total');
    const posted: Record<string, string[]> = { [a]: [], [b]: [], [c]: [] };
    for (let i = 0; i < 10; i++) for (const ch of [b, c, a]) posted[ch]!.push(await post(ch, `round ${i}`));
    await s1.waitForCount((f) => f.event === 'message.created', 10);
    await s2.waitForCount((f) => f.event === 'message.created', 10);
    await s3.waitForCount((f) => f.event === 'message.created', 10);
    expect(messageIds(s1)).to.deep.equal(posted[a]);
    expect(messageIds(s2)).to.deep.equal(posted[b]);
    expect(messageIds(s3)).to.deep.equal(posted[c]);
    // Gateway 1 read channel a's 10 posts, not the 20 of b and c (which are on shards it does not read).
    expect((await metric(gw1, 'axid_events_received_total')) - received).to.be.below(20);

    // A join to a channel of a shard not read yet: gateway 1 starts reading it, with no gap.
    await addMember(b, u1.id);
    const afterJoin = await post(b, 'right after the join');
    await s1.waitFor((f) => f.event === 'message.created' && f.data.message.id === afterJoin);
    expect(await readers(gw1), 'gateway 1 now reads b too').to.equal(3);

    // Closing streams: the shards no stream needs stop being read (10 s later; both gateways at once).
    s3.close();
    s1.close();
    await Promise.all([readersBecome(gw2, 2), readersBecome(gw1, 1)]);
    s2.close();
    await readersBecome(gw2, 1);
  });

  it('runs queued jobs, renders compatible webhook posts and counts rate limits in the cluster', async () => {
    const [channel] = (await channelsOnShards(1)) as [string];
    const stream = await open(gw2.url, ownerKey);

    // A job through BullMQ (its queue prefix a hash tag): the upload is post-processed by the worker.
    const file = await uploadFile(api.url, { key: ownerKey, size: 2048, name: 'cluster.bin' });
    expect(file.status, file.text).to.equal(201);
    await waitFor(async () => (expectOk(await owner.get(`/api/v1/files/${file.body.data.id}`)).data.status === 'ready' ? true : null), 'the file processed');

    // A compatible webhook post: rendered by the worker, its message.updated delivered by a gateway.
    const hook = expectOk(await owner.post('/api/v1/webhooks/incoming', { channel_id: channel, name: 'CI' }), 201).data;
    const sent = await fetch(`${api.url}/hooks/compat/${hook.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Build finished', attachments: [{ title: 'Open the build', title_link: 'https://ci.example.com/42' }] }),
    });
    expect(sent.status).to.equal(200);
    const updated = await stream.waitFor((f: Frame) => f.event === 'message.updated' && f.data.message.content_json !== null, 15_000);
    expect(updated.data.message.content).to.equal('Build finished\n\n> **[Open the build](https://ci.example.com/42)**');

    // Rate limits: counted in the cluster, so the limited process refuses past its limit and the
    // other process sees the same count for the key.
    const u = await user();
    const limitedClient = new Client(limited.url, u.key);
    const remaining: number[] = [];
    for (let i = 0; i < SMALL_LIMIT; i++) {
      const res = await limitedClient.get('/api/v1/channels');
      expect(res.status).to.equal(200);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).to.deep.equal(Array.from({ length: SMALL_LIMIT }, (_, i) => SMALL_LIMIT - 1 - i));
    const refused = await limitedClient.get('/api/v1/channels');
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.above(0);
    const elsewhere = await new Client(api.url, u.key).get('/api/v1/channels');
    expect(elsewhere.status).to.equal(200);
    expect(Number(elsewhere.headers.get('x-ratelimit-remaining')), 'the other process counts on from the shared count').to.be.at.most(100_000 - SMALL_LIMIT - 1);
  });

  /** A new channel whose shard's primary has a replica (one a failover here promoted has none), with a second member. */
  async function channelOnAReplicatedShard() {
    for (;;) {
      const [channel] = (await channelsOnShards(1)) as [string];
      const shardKey = busKeys(env.config.redisKeyPrefix, SHARDS).shards[channelShard(channel, SHARDS)]!.events;
      const primary = await cluster.primaryOf(shardKey);
      const replica = await cluster.replicaOf(primary);
      if (replica === null) continue;
      const member = await user();
      await addMember(channel, member.id);
      return { channel, member, shardKey, primary, replica };
    }
  }

  /** Resolves once the cluster is ok again and `replica` serves the shard. */
  async function failedOver(shardKey: string, replica: number) {
    await cluster.healthy();
    await waitFor(async () => (await cluster.primaryOf(shardKey)) === replica, 'the replica to take over the shard', 30_000);
  }

  // The next two kill a primary each (its replica takes over after cluster-node-timeout, 2 s): they run last.
  it('publishes again what a primary acknowledged but its replica never got: a stream resuming after the failover misses nothing', async () => {
    const { channel, member, shardKey, primary, replica } = await channelOnAReplicatedShard();
    const liveStream = await open(gw2.url, member.key);
    // A client that was away: its last id is from before the fault.
    const away = await open(gw1.url, ownerKey);
    const before = await post(channel, 'before the fault');
    await away.waitFor((f) => f.event === 'message.created' && f.data.message.id === before);
    const lastId = away.frames.filter((f) => f.id).at(-1)!.id!;
    away.close();
    await cluster.replicasCaughtUp(primary);

    // The replica's link is cut. The primary acknowledges the first entries the relay sends
    // (the live stream gets them from it); no replica confirms them, so the relay keeps their
    // rows and sends nothing more. Then the primary dies.
    await cluster.cutOffReplicas(primary);
    // The relay still counts the replica (the cluster does not hold it failed) and so waits for it.
    expect(await cluster.connectedReplicas(primary)).to.equal(0);
    expect(promotableReplicas(await cluster.clusterNodes(primary))).to.equal(1);
    const unreplicated: string[] = [];
    for (let i = 0; i < 20; i++) unreplicated.push(await post(channel, `unreplicated ${i}`));
    await liveStream.waitFor((f) => f.event === 'message.created' && unreplicated.includes(f.data.message.id));
    await cluster.kill(primary);
    await failedOver(shardKey, replica);

    // The promoted replica never had those entries: the relay kept their outbox rows (no replica confirmed them) and publishes them again.
    const resumed = await open(gw2.url, ownerKey, { 'Last-Event-ID': lastId });
    expect(resumed.frames[0]!.data.resumed).to.equal(true);
    await resumed.waitForCount((f) => f.event === 'message.created' && unreplicated.includes(f.data.message.id), unreplicated.length, 30_000);
    const after = await post(channel, 'after the failover');
    await resumed.waitFor((f) => f.event === 'message.created' && f.data.message.id === after, 30_000);
    expect(messageIds(resumed), 'each once, in order').to.deep.equal([...unreplicated, after]);
    // The live stream had them from the dead primary; it may get them again (docs/realtime.md: same message ids).
    await liveStream.waitFor((f) => f.event === 'message.created' && f.data.message.id === after, 30_000);
    const live = messageIds(liveStream);
    expect(unreplicated.filter((id) => !live.includes(id))).to.deep.equal([]);
    if (process.env.TEST_REPORT) console.log(`replica behind: ${unreplicated.length} posts, ${live.length - new Set(live).size} delivered twice on the live stream`);
  });

  it('loses no acknowledged post when the primary of its shard is SIGKILLed at 100 posts/s: each arrives once, live or by resuming', async () => {
    const { channel, member, shardKey, primary: victim, replica } = await channelOnAReplicatedShard();
    // One stream on each gateway process; a resumed stream goes to the other one.
    const clients = [
      { key: ownerKey, gateway: gw1, other: gw2 },
      { key: member.key, gateway: gw2, other: gw1 },
    ];
    const live = await Promise.all(clients.map((c) => open(c.gateway.url, c.key)));

    const report = await postThroughFailover(owner, channel, () => cluster.kill(victim));
    const acknowledged = new Set(report.acknowledged);
    expect(acknowledged.size).to.be.above(100);
    await failedOver(shardKey, replica);

    for (const [i, c] of clients.entries()) {
      const stream = live[i]!;
      const isAcked = (f: Frame) => f.event === 'message.created' && acknowledged.has(f.data.message.id);
      // Everything live, or the stream ended (its gateway lost Redis): then resume from its last id.
      await stream.waitForCount(isAcked, acknowledged.size, 30_000).catch(() => undefined);
      const delivered = messageIds(stream).filter((id) => acknowledged.has(id));
      let resumedIds: string[] = [];
      const got = new Set(delivered);
      if ([...acknowledged].some((id) => !got.has(id))) {
        const last = stream.frames.filter((f) => f.id).at(-1)!;
        stream.close();
        const resumed = await open(c.other.url, c.key, { 'Last-Event-ID': last.id! });
        expect(resumed.frames[0]!.data.resumed, 'the stream resumes on the other gateway').to.equal(true);
        const missing = [...acknowledged].filter((id) => !got.has(id));
        await resumed.waitForCount((f) => f.event === 'message.created' && missing.includes(f.data.message.id), missing.length, 30_000);
        resumedIds = messageIds(resumed).filter((id) => acknowledged.has(id));
      }
      const all = [...delivered, ...resumedIds];
      expect(all.filter((id) => !acknowledged.has(id))).to.deep.equal([]);
      expect(all.length - new Set(all).size, `stream ${i}: posts delivered twice`).to.equal(0);
      expect([...acknowledged].filter((id) => !all.includes(id)), `stream ${i}: silent gaps`).to.deep.equal([]);
      if (process.env.TEST_REPORT) {
        console.log(
          `failover, stream ${i}: ${report.sent} posts sent, ${acknowledged.size} acknowledged, ${delivered.length} live, ${resumedIds.length} by resuming, ${all.length - new Set(all).size} twice`,
        );
      }
    }
  });
});

/**
 * Posts to `channel` at 100 a second for 10 s and calls `fault` after 2 s.
 * Each 10 ms is a post's turn: posts late to start (a busy event loop) go out together.
 */
async function postThroughFailover(client: Client, channel: string, fault: () => Promise<void>) {
  const acknowledged: string[] = [];
  const posts: Promise<void>[] = [];
  const started = Date.now();
  let faulted: Promise<void> | null = null;
  for (let i = 0; Date.now() - started < 10_000; ) {
    if (!faulted && Date.now() - started > 2_000) faulted = fault();
    for (; i * 10 <= Date.now() - started; i++) {
      posts.push(
        client
          .post(`/api/v1/channels/${channel}/messages`, { content: `p${i}` })
          .then((res) => {
            if (res.status === 201) acknowledged.push(res.body.data.id);
          })
          .catch(() => undefined),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all([...posts, faulted]);
  return { sent: posts.length, acknowledged };
}
