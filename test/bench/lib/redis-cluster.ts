// A private Redis Cluster for scenario 9, made as test/support/redis-cluster.ts
// makes the tests' one (six `redis-server --cluster-enabled yes` on spare
// ports, three primaries with a replica each, joined by `redis-cli --cluster
// create`), but with every node started through proc.ts: the bench's cleanup
// (also on Ctrl-C, also while the cluster is still being made) stops them with
// its other children, and their folders live in the bench's temporary folder.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../../shared/embedded.js';
import { sleep, spawnProgram, tail, type Proc } from './proc.js';

export interface BenchRedisCluster {
  /** `host:port,...` for REDIS_CLUSTER_NODES. */
  seeds: string;
  /** redis-server's version. */
  version: string;
  nodes: Proc[];
  stop(): Promise<void>;
}

/** Why this machine cannot make a cluster, or null when it can. */
export function clusterUnsupported(): string | null {
  let version: string;
  try {
    version = /v=(\d+)\.(\d+)/.exec(execFileSync('redis-server', ['--version']).toString())?.[0] ?? '';
    execFileSync('redis-cli', ['--version']);
  } catch {
    return 'no redis-server and redis-cli on the PATH (Debian / Ubuntu: apt-get install redis-server)';
  }
  const major = Number(/v=(\d+)/.exec(version)?.[1] ?? 0);
  // `redis-cli --cluster create` exists from Redis 5.
  return major >= 5 ? null : `redis-server ${version.slice(2) || '(unknown version)'} cannot be joined by redis-cli --cluster (Redis 5 or later)`;
}

async function ask<T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export async function startRedisCluster(dir: string, size = 6, replicas = 1): Promise<BenchRedisCluster> {
  const version = /v=([\d.]+)/.exec(execFileSync('redis-server', ['--version']).toString())?.[1] ?? 'unknown';
  const ports: number[] = [];
  while (ports.length < size) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  // The node timeout is Redis's default (15 s), not the tests' 2 s: nothing
  // here fails over on purpose, and on a loaded machine 2 s of a starved node
  // would elect its replica in the middle of a measurement.
  const nodes = ports.map((port) => {
    const nodeDir = path.join(dir, `redis-${port}`);
    mkdirSync(nodeDir, { recursive: true });
    return spawnProgram(`redis-${port}`, 'redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
      '--cluster-node-timeout', '15000', '--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0', '--dir', nodeDir,
    ]);
  });
  const cluster: BenchRedisCluster = {
    seeds: ports.map((p) => `127.0.0.1:${p}`).join(','),
    version,
    nodes,
    stop: async () => void (await Promise.all(nodes.map((n) => n.stop(2000)))),
  };
  try {
    for (const [i, port] of ports.entries()) {
      await until(`redis on ${port}`, async () => {
        if (nodes[i]!.child.exitCode !== null) throw new Error(`redis-server on ${port} exited: ${tail(nodes[i]!.output())}`);
        return (await ask(port, (r) => r.ping())) === 'PONG';
      });
    }
    const create = spawnProgram('redis-cli --cluster create', 'redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes']);
    const code = await new Promise<number | null>((resolve) => create.child.once('exit', (c) => resolve(c)));
    if (code !== 0) throw new Error(`redis-cli --cluster create failed (${code}): ${tail(create.output())}`);
    // Every node says ok and every replica is in sync with its primary.
    await until('the cluster to be ok', async () => {
      for (const port of ports) {
        if (!/cluster_state:ok/.test(await ask(port, (r) => r.cluster('INFO') as Promise<string>))) return false;
        const replication = await ask(port, (r) => r.info('replication'));
        if (/role:master/.test(replication) && /slave\d+:.*state=(?!online)/.test(replication)) return false;
        if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) return false;
      }
      return true;
    });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
