// Failed sign-ins (contract §12): more than 10 for one email or one client
// address in 15 minutes, and the next attempt answers 429 with the rate-limit
// headers until the window ends. Counted in Redis by rate-limiter-flexible, so
// every replica sees the same count (shared/http/rate-limit.ts createLimiter).
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { AppError } from '../../../shared/errors.js';
import { createLimiter } from '../../../shared/http/rate-limit.js';
import { keys } from '../../../shared/redis.js';
import type { Runtime } from '../../../shared/runtime.js';

export const SIGN_IN_FAILURES = { points: 10, duration: 15 * 60 } as const;

const limiters = new WeakMap<Runtime, RateLimiterRedis>();
const limiterOf = (rt: Runtime) => {
  let limiter = limiters.get(rt);
  if (!limiter) {
    limiter = createLimiter({ redis: rt.redis, keyPrefix: `${keys(rt.config.redisKeyPrefix).rateLimit}sign-in`, ...SIGN_IN_FAILURES });
    limiters.set(rt, limiter);
  }
  return limiter;
};

/** What failures count against: the address typed (any case) and the client. */
export const failureKeys = (o: { email?: string; userId?: string; address: string }) =>
  [o.email !== undefined ? `email:${o.email.trim().toLowerCase()}` : `user:${o.userId}`, `ip:${o.address}`];

/** Throws 429 when any of `subjects` used up its failures. */
export async function checkFailures(rt: Runtime, subjects: string[]): Promise<void> {
  const limiter = limiterOf(rt);
  const states = await Promise.all(subjects.map((s) => limiter.get(s)));
  const blocked = states.filter((s) => s !== null && s.consumedPoints >= SIGN_IN_FAILURES.points);
  if (blocked.length === 0) return;
  const resetMs = Math.max(...blocked.map((s) => s!.msBeforeNext));
  const retryAfter = Math.max(1, Math.ceil(resetMs / 1000));
  rt.metrics.signIns.inc({ method: 'password', outcome: 'rate_limited' });
  throw new AppError('rate_limited', `too many failed sign-ins: retry after ${retryAfter} s`, {
    'X-RateLimit-Limit': String(SIGN_IN_FAILURES.points),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(Math.ceil((Date.now() + resetMs) / 1000)),
    'Retry-After': String(retryAfter),
  });
}

export async function countFailure(rt: Runtime, subjects: string[]): Promise<void> {
  const limiter = limiterOf(rt);
  await Promise.all(subjects.map((s) => limiter.penalty(s, 1)));
}

/** A person who got in has their address's count start again; the client's stays. */
export const forgetFailures = (rt: Runtime, subject: string) => limiterOf(rt).delete(subject);
