import { Cluster, Redis } from 'ioredis';

export { Redis };

/** A connection to one Redis node or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * A Redis connection. `maxRetriesPerRequest: null` keeps commands queued while
 * Redis is briefly away instead of failing them (BullMQ requires it too).
 * `commandTimeoutMs` bounds every command (the connection requests use: a
 * paused Redis keeps the socket open and answers nothing); never set it on a
 * connection that blocks (XREAD BLOCK, BullMQ's worker).
 */
export function createRedis(url: string, name: string, o: { autoPipelining?: boolean; commandTimeoutMs?: number } = {}): Redis {
  return new Redis(url, {
    ...(o.commandTimeoutMs ? { commandTimeout: o.commandTimeoutMs } : {}),
    connectionName: name,
    // Commands issued in the same tick go out in one write: fewer syscalls under load.
    enableAutoPipelining: o.autoPipelining ?? false,
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2000),
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
