// Button clicks (level 3): each reaches the message's author (a bot's stream or
// subscription), so one person hammering one button would be a flood there.
// At most CLICKS.points clicks per person and message in CLICKS.duration
// seconds; the next answers 429 with Retry-After. Counted in Redis by
// rate-limiter-flexible, as every other limit (shared/http/rate-limit.ts), so
// every replica counts together; while Redis does not answer, each process
// counts in memory.
import { RateLimiterMemory, type RateLimiterRedis } from 'rate-limiter-flexible';
import { AppError } from '../../../shared/errors.js';
import { consume, createLimiter } from '../../../shared/http/rate-limit.js';
import { answering, keys } from '../../../shared/redis.js';
import type { Runtime } from '../../../shared/runtime.js';

/** A person may click a message's buttons 10 times in 10 s (a burst, then one a second): enough for any hand, not for a script. */
export const CLICKS = { points: 10, duration: 10 } as const;

const limiters = new WeakMap<Runtime, { redis: RateLimiterRedis; memory: RateLimiterMemory }>();
const limiterOf = (rt: Runtime) => {
  let limiter = limiters.get(rt);
  if (!limiter) {
    const keyPrefix = `${keys(rt.config.redisKeyPrefix).rateLimit}clicks`;
    const memory = new RateLimiterMemory({ keyPrefix, ...CLICKS });
    limiter = { redis: createLimiter({ redis: rt.redis, keyPrefix, ...CLICKS }, memory), memory };
    limiters.set(rt, limiter);
  }
  return limiter;
};

/** Counts a click of `userId` on `messageId`; 429 rate_limited past the limit. */
export async function countClick(rt: Runtime, userId: string, messageId: string): Promise<void> {
  const limiter = limiterOf(rt);
  const verdict = await consume(answering(rt.redis) ? limiter.redis : limiter.memory, `${userId}:${messageId}`);
  if (verdict.allowed) return;
  const retryAfter = Math.max(1, Math.ceil((verdict.resetAt - Date.now()) / 1000));
  throw new AppError('rate_limited', `too many clicks on this message: retry after ${retryAfter} s`, {
    'X-RateLimit-Limit': String(CLICKS.points),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(Math.ceil(verdict.resetAt / 1000)),
    'Retry-After': String(retryAfter),
  });
}
