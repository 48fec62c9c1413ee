import { Redis } from 'ioredis';

export { Redis };

/**
 * A Redis connection. `maxRetriesPerRequest: null` keeps commands queued while
 * Redis is briefly away instead of failing them (BullMQ requires it too).
 */
export function createRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2000),
    lazyConnect: false,
  });
}

export const keys = (prefix: string) => ({
  events: `${prefix}events`,
  rateLimit: `${prefix}rl:`,
  queue: `${prefix}bull`,
  outboxWake: `${prefix}outbox-wake`,
});
