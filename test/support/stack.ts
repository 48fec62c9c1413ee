// One stack per test run: its own database and Redis key prefix, started
// in-process on a random port, torn down at the end (only what it created).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { deleteKeysOfPrefix } from '../../shared/redis.js';
import { startStack, type Stack } from '../../services/stack.js';
import { createWorkspaceWithOwner } from '../../services/core/workspaces/workspaces.service.js';
import { Client, serverLevels } from './client.js';
import { LocalRedisCluster } from './redis-cluster.js';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = 'redis://127.0.0.1:6379';

export interface TestEnv {
  config: Config;
  databaseName: string;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** A fresh database name, Redis prefix and data folder, and how to remove them. */
/**
 * With TEST_REDIS_CLUSTER=1 (test/processes/redis-cluster.test.ts runs some
 * files so), the run starts a local Redis Cluster and every test stack uses
 * it with EVENT_SHARDS=4 (TEST_EVENT_SHARDS).
 */
let cluster: Promise<LocalRedisCluster> | null = null;
const clusterOverrides = (): Record<string, string> =>
  clusterSeeds ? { REDIS_CLUSTER_NODES: clusterSeeds, EVENT_SHARDS: process.env.TEST_EVENT_SHARDS ?? '4' } : {};
let clusterSeeds: string | null = null;

export async function startTestCluster() {
  if (process.env.TEST_REDIS_CLUSTER !== '1') return;
  cluster ??= LocalRedisCluster.start();
  clusterSeeds = (await cluster).seeds;
}

export async function stopTestCluster() {
  const c = cluster;
  cluster = null;
  clusterSeeds = null;
  await (await c)?.stop();
}

export function testEnv(overrides: Record<string, string> = {}): TestEnv {
  const id = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const databaseName = `axid_test_${id}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'axid-test-'));
  const prefix = `axidtest:${id}:`;
  const config = loadConfig({
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${databaseName}`,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_POINTS: '100000',
    // Cheap password hashes: the suite hashes hundreds (the default costs ~100 ms each).
    PASSWORD_SCRYPT_N: '4096',
    BOOTSTRAP_ADMIN_KEY: randomBytes(24).toString('base64url'),
    ...clusterOverrides(),
    ...overrides,
  });
  return {
    config,
    databaseName,
    dataDir,
    async cleanup() {
      await dropDatabase(databaseName);
      // A test cluster is removed whole at the end of the run.
      if (!config.redisCluster) await deleteRedisKeys(prefix);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function dropDatabase(name: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

export async function deleteRedisKeys(prefix: string) {
  const redis = new Redis(REDIS_URL);
  try {
    await deleteKeysOfPrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

let shared: { stack: Stack; env: TestEnv } | null = null;
let level3: Promise<{ stack: Stack; env: TestEnv }> | null = null;

/** The run's shared stack (all roles), started by the root hook. */
export function stack(): Stack {
  if (!shared) throw new Error('the test stack is not running (root hook missing?)');
  return shared.stack;
}

export async function startSharedStack() {
  await startTestCluster();
  const env = testEnv();
  const s = await startStack(env.config, createLogger(env.config.logLevel));
  shared = { stack: s, env };
}

/**
 * The run's stack at FEATURE_LEVEL=3 (docs/feature-levels.md), started by the
 * first test file that asks for it and stopped with the shared one. The
 * shared stack stays at level 2, so the rest of the suite proves level 2
 * unchanged.
 */
export function level3Stack(): Promise<Stack> {
  level3 ??= (async () => {
    const env = testEnv({ FEATURE_LEVEL: '3' });
    const s = await startStack(env.config, createLogger(env.config.logLevel));
    serverLevels.set(s.url, '3');
    return { stack: s, env };
  })();
  return level3.then((l) => l.stack);
}

export async function stopSharedStack() {
  if (level3) {
    const { stack: s3, env: env3 } = await level3;
    level3 = null;
    serverLevels.delete(s3.url);
    await s3.close();
    await env3.cleanup();
  }
  if (shared) {
    const { stack: s, env } = shared;
    shared = null;
    await s.close();
    await env.cleanup();
  }
  await stopTestCluster();
}

export interface TestWorkspace {
  workspaceId: string;
  ownerId: string;
  ownerKey: string;
  owner: Client;
  /** Creates a user (human by default) through the API and returns a client for it. */
  user(o?: { name?: string; role?: 'admin' | 'member' | 'owner'; is_agent?: boolean }): Promise<{ id: string; key: string; client: Client }>;
}

let counter = 0;
export const uniqueName = (base: string) => `${base}-${process.pid}-${++counter}-${randomBytes(2).toString('hex')}`;

/** Every test builds its own workspace. */
export async function newWorkspace(s: Stack = stack()): Promise<TestWorkspace> {
  const created = await createWorkspaceWithOwner(s.rt.db, { name: uniqueName('ws'), ownerName: uniqueName('owner') });
  const owner = new Client(s.url, created.key);
  return {
    workspaceId: created.workspace.id,
    ownerId: created.owner.id,
    ownerKey: created.key,
    owner,
    async user(o = {}) {
      const res = await owner.post('/api/v1/users', { name: o.name ?? uniqueName(o.is_agent ? 'bot' : 'user'), role: o.role, is_agent: o.is_agent });
      if (res.status !== 201) throw new Error(`creating a user failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.data.id, key: res.body.data.api_key, client: new Client(s.url, res.body.data.api_key) };
    },
  };
}
