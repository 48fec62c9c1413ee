// Axid on a Redis Cluster (REDIS_CLUSTER_NODES, EVENT_SHARDS=4): six local
// redis-server nodes (test/support/redis-cluster.ts). The realtime, queue,
// webhook-rendering and rate-limit tests run against one as they run against
// one node (in-process stacks). Separate gateway processes on a cluster, the
// shards each reads and a primary's failover: redis-cluster-gateways.test.ts.
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { repoRoot } from '../support/stack-process.js';

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
});
