import { Cluster, Redis as RedisNode } from 'ioredis';

/** A connection to one Redis node or to a Redis Cluster (REDIS_CLUSTER_NODES). */
export type Redis = RedisNode | Cluster;
export type RedisClient = Redis;

/**
 * REDIS_CLUSTER_NODES becomes this URL in the config (shared/config.ts), so
 * that a Redis address stays one string everywhere it is handed on.
 */
const CLUSTER_SCHEME = 'redis-cluster://';

export const clusterUrl = (nodes: string[]) => `${CLUSTER_SCHEME}${nodes.join(',')}`;

/** The seed nodes of a cluster URL; null for a one-node `redis://` URL. */
export function clusterNodesOf(url: string): { host: string; port: number }[] | null {
  if (!url.startsWith(CLUSTER_SCHEME)) return null;
  return url
    .slice(CLUSTER_SCHEME.length)
    .split(',')
    .map((node) => {
      const i = node.lastIndexOf(':');
      return { host: node.slice(0, i), port: Number(node.slice(i + 1)) };
    });
}

export const isCluster = (redis: Redis): redis is Cluster => redis instanceof Cluster;

/**
 * A Redis connection. `maxRetriesPerRequest: null` keeps commands queued while
 * Redis is briefly away instead of failing them (BullMQ requires it too).
 * `commandTimeoutMs` bounds every command (the connection requests use: a
 * paused Redis keeps the socket open and answers nothing); never set it on a
 * connection that blocks (XREAD BLOCK, BullMQ's worker).
 */
export function createRedis(url: string, name: string, o: { autoPipelining?: boolean; commandTimeoutMs?: number } = {}): Redis {
  const options = {
    ...(o.commandTimeoutMs ? { commandTimeout: o.commandTimeoutMs } : {}),
    connectionName: name,
    maxRetriesPerRequest: null,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2000),
  };
  const nodes = clusterNodesOf(url);
  if (nodes) {
    // Every command goes to the primary holding its key's slot; MOVED and
    // ASK (a failover, a resharding) are followed by refreshing the slots.
    return new Cluster(nodes, {
      redisOptions: options,
      enableAutoPipelining: o.autoPipelining ?? false,
      clusterRetryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 2000),
      scaleReads: 'master',
      lazyConnect: false,
    });
  }
  return new RedisNode(url, {
    ...options,
    // Commands issued in the same tick go out in one write: fewer syscalls under load.
    enableAutoPipelining: o.autoPipelining ?? false,
    lazyConnect: false,
  });
}

/** ioredis's message when commandTimeout fires (it has no code). */
export const COMMAND_TIMEOUT_MESSAGE = 'Command timed out';

export const keys = (prefix: string) => ({
  events: `${prefix}events`,
  /** The access-changing events only (events.ts ACCESS_EVENT_TYPES). */
  accessEvents: `${prefix}access-events`,
  // rate-limiter-flexible adds the ":" after it.
  rateLimit: `${prefix}rl`,
  queue: `${prefix}bull`,
  outboxWake: `${prefix}outbox-wake`,
});
