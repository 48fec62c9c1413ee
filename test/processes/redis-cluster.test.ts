// Axid on a Redis Cluster (REDIS_CLUSTER_NODES, EVENT_SHARDS=4): six local
// redis-server nodes (test/support/redis-cluster.ts). The realtime, queue,
// webhook-rendering and rate-limit tests run against one as they run against
// one node; a primary killed while posts go in loses no acknowledged event.
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { startStack, type Stack } from '../../services/stack.js';
import { channelShard } from '../../shared/event-bus.js';
import { createLogger } from '../../shared/logger.js';
import { Client } from '../support/client.js';
import { LocalRedisCluster } from '../support/redis-cluster.js';
import { openRaw, type RawStream } from '../support/sse.js';
import { repoRoot } from '../support/stack-process.js';
import { newWorkspace, testEnv, uniqueName, type TestEnv } from '../support/stack.js';

/** The test files that run again on a cluster with EVENT_SHARDS=4 (TEST_REDIS_CLUSTER=1, test/support/stack.ts). */
const ON_A_SHARDED_CLUSTER = [
  'test/api/stream-replay.test.ts',
  'test/api/typing.test.ts',
  'test/api/worker.test.ts',
  'test/api/files.test.ts',
  'test/api/webhooks.test.ts',
  'test/api/http-basics.test.ts',
];
/**
 * stream.test.ts proves "nothing else arrived" with a workspace-wide fence
 * event, which needs one order over every event: it runs on a cluster with
 * one shard (with more, order holds within a channel only: docs/realtime.md).
 */
const ON_A_ONE_SHARD_CLUSTER = ['test/api/stream.test.ts'];

async function mochaOnACluster(files: string[], shards: number, skip?: string) {
  const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...files, ...(skip ? ['--grep', skip, '--invert'] : [])], {
    cwd: repoRoot,
    env: { ...process.env, TEST_REDIS_CLUSTER: '1', TEST_EVENT_SHARDS: String(shards) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  expect(code, out.slice(-4000)).to.equal(0);
  expect(out).to.match(/[1-9]\d* passing/);
}

describe('on a Redis Cluster', function () {
  this.timeout(600_000);

  it('passes the replay, typing, queue, file, webhook-rendering and rate-limit tests with EVENT_SHARDS=4', () => mochaOnACluster(ON_A_SHARDED_CLUSTER, 4));

  // The keep-alive test times silences of 300 ms: a cluster's replica WAIT per
  // publish, on a loaded machine, stretches them (it tests no Redis behaviour).
  it('passes the stream tests with one shard', () => mochaOnACluster(ON_A_ONE_SHARD_CLUSTER, 1, 'sends the keep-alive comment'));

  describe('a primary killed while 100 posts/s go in', () => {
    let cluster: LocalRedisCluster;
    let env: TestEnv;
    let s: Stack;
    const streams: RawStream[] = [];

    before(async () => {
      cluster = await LocalRedisCluster.start();
      env = testEnv({ REDIS_CLUSTER_NODES: cluster.seeds, EVENT_SHARDS: '4', FEATURE_LEVEL: '3' });
      s = await startStack(env.config, createLogger(env.config.logLevel));
    });

    after(async () => {
      for (const stream of streams) stream.close();
      await s?.close();
      await env?.cleanup();
      await cluster?.stop();
    });

    it('delivers every acknowledged post to the open stream or its resumption: no silent gap', async () => {
      const ws = await newWorkspace(s);
      const owner = new Client(s.url, ws.ownerKey);
      const created = await owner.post('/api/v1/channels', { name: uniqueName('failover'), is_private: false });
      expect(created.status).to.equal(201);
      const channelId = created.body.data.id as string;
      const shard = s.rt.bus.shards[channelShard(channelId, 4)]!;
      const victim = await cluster.primaryOf(shard.events);

      const stream = await openRaw(s.url, ws.ownerKey);
      streams.push(stream);

      // 100 posts a second for 10 s; the primary holding the channel's shard dies after 2 s.
      const acknowledged: string[] = [];
      const posts: Promise<void>[] = [];
      const started = Date.now();
      let killed = false;
      // Every 10 ms is a post's turn: posts late to start (a busy event loop) go out together.
      for (let i = 0; Date.now() - started < 10_000; ) {
        if (!killed && Date.now() - started > 2_000) {
          killed = true;
          void cluster.kill(victim);
        }
        for (; i * 10 <= Date.now() - started; i++) {
          posts.push(
            owner
              .post(`/api/v1/channels/${channelId}/messages`, { content: `p${i}` })
              .then((res) => {
                if (res.status === 201) acknowledged.push(res.body.data.id);
              })
              .catch(() => undefined),
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all(posts);
      expect(acknowledged.length).to.be.above(100);

      // Live, or else by resuming from the last frame the stream got.
      const receivedIds = () => stream.frames.filter((f) => f.event === 'message.created').map((f) => f.data.message.id as string);
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && !stream.isEnded() && acknowledged.some((id) => !receivedIds().includes(id))) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const got = new Set(receivedIds());
      let missing = acknowledged.filter((id) => !got.has(id));
      if (missing.length > 0) {
        const last = stream.frames.filter((f) => f.id).at(-1)!;
        const resumed = await openRaw(s.url, ws.ownerKey, { headers: { 'Last-Event-ID': last.id! } });
        streams.push(resumed);
        expect(resumed.frames[0]!.data.resumed, 'the stream resumes').to.equal(true);
        await resumed.waitForCount((f) => f.event === 'message.created' && missing.includes(f.data.message.id), missing.length, 30_000);
        missing = [];
      }
      expect(missing).to.deep.equal([]);
      if (process.env.TEST_REPORT) {
        const all = receivedIds();
        console.log(`failover: ${posts.length} posts, ${acknowledged.length} acknowledged, ${all.length} frames, ${all.length - new Set(all).size} repeated`);
      }
    });
  });
});
