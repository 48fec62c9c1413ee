import { Cluster, Redis as RedisNode, type Command } from 'ioredis';

/** A connection to one Redis node or to a Redis Cluster (REDIS_CLUSTER_NODES). */
export type Redis = RedisNode | Cluster;
export type RedisClient = Redis;

/**
 * REDIS_CLUSTER_NODES becomes this URL in the config (shared/config.ts), so
 * that a Redis address stays one string everywhere it is handed on. The
 * credentials and TLS (`rediss://`) of REDIS_URL, when set beside it, apply
 * to every node: `redis-cluster://[user:pass@]h:p,…` or `rediss-cluster://…`.
 */
const CLUSTER_URL = /^(rediss?)-cluster:\/\/(?:([^@]*)@)?(.+)$/;

export function clusterUrl(nodes: string[], credentialsFrom?: string): string {
  const from = credentialsFrom ? new URL(credentialsFrom) : null;
  const auth = from && (from.username || from.password) ? `${from.username || 'default'}:${from.password}@` : '';
  return `${from?.protocol === 'rediss:' ? 'rediss' : 'redis'}-cluster://${auth}${nodes.join(',')}`;
}

export interface ClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/** The seed nodes (and credentials) of a cluster URL; null for a one-node `redis://` URL. */
export function clusterNodesOf(url: string): ClusterTarget['nodes'] | null {
  return clusterTargetOf(url)?.nodes ?? null;
}

export function clusterTargetOf(url: string): ClusterTarget | null {
  const m = CLUSTER_URL.exec(url);
  if (!m) return null;
  const [user, pass] = (m[2] ?? '').split(':');
  return {
    tls: m[1] === 'rediss',
    ...(user ? { username: decodeURIComponent(user) } : {}),
    ...(pass ? { password: decodeURIComponent(pass) } : {}),
    nodes: m[3]!.split(',').map((node) => {
      const i = node.lastIndexOf(':');
      return { host: node.slice(0, i), port: Number(node.slice(i + 1)) };
    }),
  };
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
  const redis = connect(url, name, o);
  if (o.commandTimeoutMs) watchSilence(redis);
  return redis;
}

function connect(url: string, name: string, o: { autoPipelining?: boolean; commandTimeoutMs?: number }): Redis {
  const options = {
    ...(o.commandTimeoutMs ? { commandTimeout: o.commandTimeoutMs } : {}),
    connectionName: name,
    maxRetriesPerRequest: null,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2000),
  };
  const target = clusterTargetOf(url);
  if (target) {
    // Every command goes to the primary holding its key's slot; MOVED and
    // ASK (a failover, a resharding) are followed by refreshing the slots.
    return new Cluster(target.nodes, {
      redisOptions: {
        ...options,
        ...(target.username ? { username: target.username } : {}),
        ...(target.password ? { password: target.password } : {}),
        ...(target.tls ? { tls: {} } : {}),
      },
      // Managed clusters announce nodes by address behind TLS certificates
      // for their names: connect to what they announce as they announce it.
      ...(target.tls ? { dnsLookup: (address: string, callback: (err: Error | null, address: string) => void) => callback(null, address) } : {}),
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

/** Connections that stopped answering: a command waited out its bound, and no PING has answered since. */
const silent = new WeakSet<Redis>();
const PROBE_MS = 500;

/**
 * Whether a connection answers. A paused Redis keeps its socket open and its
 * status 'ready', so every command on a request's path waited out its own
 * bound (2 to 6 s a request under `npm run chaos`). Once one command of a
 * bounded connection has timed out, the connection counts as away until a
 * PING answers (tried every PROBE_MS), and request paths skip it as they do a
 * connection that is not ready: rate limits count in memory, typing answers
 * 503, reads go to the primary.
 */
export const answering = (redis: Redis) => redis.status === 'ready' && !silent.has(redis);

function watchSilence(redis: Redis) {
  const send = redis.sendCommand.bind(redis) as (command: Command, ...rest: unknown[]) => unknown;
  (redis as { sendCommand: unknown }).sendCommand = (command: Command, ...rest: unknown[]) => {
    const sent = send(command, ...rest);
    command.promise.catch((err: Error) => {
      if (err?.message === COMMAND_TIMEOUT_MESSAGE) fallSilent(redis);
    });
    return sent;
  };
}

function fallSilent(redis: Redis) {
  if (silent.has(redis)) return;
  silent.add(redis);
  const probe = () => {
    if (redis.status === 'end') return;
    redis.ping().then(
      () => silent.delete(redis),
      () => setTimeout(probe, PROBE_MS).unref(),
    );
  };
  probe();
}

export const keys = (prefix: string) => ({
  events: `${prefix}events`,
  /** The access-changing events only (events.ts ACCESS_EVENT_TYPES). */
  accessEvents: `${prefix}access-events`,
  // rate-limiter-flexible adds the ":" after it.
  rateLimit: `${prefix}rl`,
  queue: `${prefix}bull`,
  outboxWake: `${prefix}outbox-wake`,
  /** The hash tag of every presence key (services/gateway/presence.ts). */
  presence: `{${prefix}presence}`,
});

/** The set of a workspace's users with an open stream on any gateway (kept by services/gateway/presence.ts; `@here` reads it). */
export const onlineUsersKey = (prefix: string, workspaceId: string) => `${keys(prefix).presence}:ws:${workspaceId}`;

/**
 * Deletes every key of a prefix with SCAN (never FLUSHALL): the keys above
 * and the event bus's, which begin with their hash tag (`{<prefix>bus:<n>}`,
 * shared/event-bus.ts). The tests and the bench clean up what they made with
 * it; on one node (a cluster scans node by node).
 */
export async function deleteKeysOfPrefix(redis: RedisNode, prefix: string): Promise<void> {
  for (const pattern of [`${prefix}*`, `{${prefix}*`]) {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (found.length) await redis.del(...found);
    } while (cursor !== '0');
  }
}
