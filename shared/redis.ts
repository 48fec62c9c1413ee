import { Redis } from 'ioredis';

export { Redis };

/**
 * A Redis connection. `maxRetriesPerRequest: null` keeps commands queued while
 * Redis is briefly away instead of failing them (BullMQ requires it too).
 */
export function createRedis(url: string, name: string, o: { autoPipelining?: boolean } = {}): Redis {
  return new Redis(url, {
    connectionName: name,
    // Commands issued in the same tick go out in one write: fewer syscalls under load.
    enableAutoPipelining: o.autoPipelining ?? false,
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2000),
    lazyConnect: false,
  });
}

export const keys = (prefix: string) => ({
  events: `${prefix}events`,
  /** The access-changing events only (events.ts ACCESS_EVENT_TYPES). */
  accessEvents: `${prefix}access-events`,
  // rate-limiter-flexible adds the ":" after it.
  rateLimit: `${prefix}rl`,
  queue: `${prefix}bull`,
  outboxWake: `${prefix}outbox-wake`,
});
