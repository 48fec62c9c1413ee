// Failed sign-ins (contract §12): 10 attempts for one email or one client
// address in 15 minutes, and the next one answers 429 with the rate-limit
// headers until the window ends. Counted in Redis by rate-limiter-flexible, so
// every replica sees the same count (shared/http/rate-limit.ts createLimiter).
//
// An attempt takes its slot before the password is hashed (an atomic consume),
// and a success gives it back: a count checked before the work and raised
// after it let 50 concurrent guesses all be checked, since none had failed yet
// when the others were let through (issue 33).
import { RateLimiterRes, type RateLimiterRedis } from 'rate-limiter-flexible';
import { AppError } from '../../../shared/errors.js';
import { createLimiter } from '../../../shared/http/rate-limit.js';
import { keys } from '../../../shared/redis.js';
import type { Runtime } from '../../../shared/runtime.js';

export const SIGN_IN_FAILURES = { points: 10, duration: 15 * 60 } as const;

const limiters = new WeakMap<Runtime, RateLimiterRedis>();
const limiterOf = (rt: Runtime) => {
  let limiter = limiters.get(rt);
  if (!limiter) {
    limiter = createLimiter({
      redis: rt.redis,
      keyPrefix: `${keys(rt.config.redisKeyPrefix).rateLimit}sign-in`,
      ...SIGN_IN_FAILURES,
      // Never blocked in this process's memory: a slot given back (a success)
      // or a count cleared must be seen at once, and Redis answers a refused
      // attempt for far less than the hash it saves.
      inMemoryBlockOnConsumed: 0,
    });
    limiters.set(rt, limiter);
  }
  return limiter;
};

/**
 * What attempts count against: the address typed, as its identity key
 * (shared/identity.ts: every spelling of one address counts together), or the
 * person, and the client.
 */
export const attemptKeys = (o: { emailKey?: string; userId?: string; address: string }) =>
  [o.emailKey !== undefined ? `email:${o.emailKey}` : `user:${o.userId}`, `ip:${o.address}`];

/**
 * Takes one attempt from every subject before the password is checked.
 * Throws 429 when any subject has none left; then nothing is checked, and the
 * slots taken from the other subjects are given back.
 */
export async function takeAttempt(rt: Runtime, subjects: string[]): Promise<void> {
  const limiter = limiterOf(rt);
  const results = await Promise.allSettled(subjects.map((s) => limiter.consume(s)));
  const refused: RateLimiterRes[] = [];
  for (const r of results) {
    if (r.status === 'fulfilled') continue;
    if (!(r.reason instanceof RateLimiterRes)) throw r.reason;
    refused.push(r.reason);
  }
  if (refused.length === 0) return;
  await Promise.all(subjects.filter((_, i) => results[i]!.status === 'fulfilled').map((s) => limiter.reward(s, 1)));
  const resetMs = Math.max(...refused.map((r) => r.msBeforeNext));
  const retryAfter = Math.max(1, Math.ceil(resetMs / 1000));
  rt.metrics.signIns.inc({ method: 'password', outcome: 'rate_limited' });
  throw new AppError('rate_limited', `too many failed sign-ins: retry after ${retryAfter} s`, {
    'X-RateLimit-Limit': String(SIGN_IN_FAILURES.points),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(Math.ceil((Date.now() + resetMs) / 1000)),
    'Retry-After': String(retryAfter),
  });
}

/**
 * A person who got in gives their attempt back: the email's (or person's)
 * count starts again, the client's loses this one attempt only.
 */
export async function attemptSucceeded(rt: Runtime, subjects: string[]): Promise<void> {
  const limiter = limiterOf(rt);
  const [own, ...others] = subjects;
  await Promise.all([limiter.delete(own!), ...others.map((s) => limiter.reward(s, 1))]);
}
